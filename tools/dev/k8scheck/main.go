// Command k8scheck checks Kubernetes Job manifests that placer cluster k8s
// wrote against Kubernetes' own API types (k8s.io/api/batch/v1): each
// file must decode strictly into a batch/v1 Job (every field known to the
// API, every value of its type, every resource quantity valid), and meet
// the API server's rules for what placer writes (restated here: an
// Indexed Job sets completions, pods restart Never or OnFailure, names
// are DNS labels, every volume mount names a volume).
//
// It is its own module (tools/dev/k8scheck/go.mod) so that placer does not
// depend on k8s.io/api and its 17 modules; cmd/placer's TestClusterK8sSchema
// runs it (go run), and skips when the Go module proxy cannot be reached.
//
//	go run . FILE...
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func check(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var job batchv1.Job
	if err := dec.Decode(&job); err != nil {
		return fmt.Errorf("not a batch/v1 Job: %w", err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		return fmt.Errorf("apiVersion %q kind %q, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	if !dnsLabel.MatchString(job.Name) || len(job.Name) > 63 {
		return fmt.Errorf("metadata.name %q is not a DNS label", job.Name)
	}
	s := job.Spec
	if s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion && s.Completions == nil {
		return fmt.Errorf("an Indexed Job needs spec.completions")
	}
	for _, n := range []*int32{s.Completions, s.Parallelism, s.BackoffLimit} {
		if n != nil && *n < 0 {
			return fmt.Errorf("negative count %d", *n)
		}
	}
	p := s.Template.Spec
	if p.RestartPolicy != corev1.RestartPolicyNever && p.RestartPolicy != corev1.RestartPolicyOnFailure {
		return fmt.Errorf("a Job's pods restart Never or OnFailure, not %q", p.RestartPolicy)
	}
	if len(p.Containers) == 0 {
		return fmt.Errorf("no containers")
	}
	vols := map[string]bool{}
	for _, v := range p.Volumes {
		if !dnsLabel.MatchString(v.Name) {
			return fmt.Errorf("volume name %q is not a DNS label", v.Name)
		}
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "" {
			return fmt.Errorf("volume %s: persistentVolumeClaim without claimName", v.Name)
		}
		vols[v.Name] = true
	}
	for _, c := range p.Containers {
		if !dnsLabel.MatchString(c.Name) || c.Image == "" {
			return fmt.Errorf("container %q: a DNS-label name and an image are required", c.Name)
		}
		for _, m := range c.VolumeMounts {
			if !vols[m.Name] || m.MountPath == "" {
				return fmt.Errorf("container %s mounts %q at %q: no such volume, or no path", c.Name, m.Name, m.MountPath)
			}
		}
		for name, q := range c.Resources.Limits {
			if r, ok := c.Resources.Requests[name]; ok && r.Cmp(q) > 0 {
				return fmt.Errorf("container %s: %s request %s above its limit %s", c.Name, name, r.String(), q.String())
			}
		}
	}
	return nil
}

func main() {
	bad := false
	for _, path := range os.Args[1:] {
		if err := check(path); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			bad = true
		} else {
			fmt.Printf("%s: a valid batch/v1 Job\n", path)
		}
	}
	if bad || len(os.Args) < 2 {
		os.Exit(1)
	}
}
