package main

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/launch"
	"github.com/spf13/cobra"
)

func init() { register(newClusterCmd) }

// newClusterCmd is the parent of the cluster job writers.
func newClusterCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Run a report's cells on a Slurm cluster or Kubernetes (writes the job files)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newClusterSlurmCmd(s), newClusterK8sCmd(s))
	return cmd
}

// clusterArgs reads the report command after --.
func clusterArgs(cmd *cobra.Command, args []string, o *launch.Options) error {
	if at := cmd.ArgsLenAtDash(); at >= 0 {
		if at > 0 {
			return usagef("unexpected %q before --: give the report command after --", args[0])
		}
		o.Report = args
		return nil
	}
	if len(args) > 0 {
		return usagef("give the report command after --, e.g. -- %s", strings.Join(args, " "))
	}
	return nil
}

func addClusterJobFlags(cmd *cobra.Command, o *launch.Options, asJSON *bool) {
	f := cmd.Flags()
	f.StringVar(&o.Placer, "placer", "", "the placer `BINARY` that lists the cells here (and, for Slurm, runs them on the nodes; default: this one)")
	f.IntVar(&o.Parallel, "parallel", 0, "cells running at once (default: all)")
	f.IntVar(&o.CPUs, "cpus-per-task", 1, "CPUs of each task (one cell)")
	f.StringVar(&o.Name, "name", "", "the job's `NAME` (default placer-REPORT)")
	f.BoolVar(asJSON, "json", false, "print what was written as JSON")
}

func newClusterSlurmCmd(s *streams) *cobra.Command {
	o := launch.Options{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "slurm --dir DIR [flags] -- report NAME [report flags]",
		Short: "Write a Slurm job array of a report's cells and a follow-up job printing the table",
		Long: `Writes, in --out (default DIR/slurm), a Slurm batch script that runs the
report's cells as a job array (cells.sbatch: one task per cell, the report
with --cell $SLURM_ARRAY_TASK_ID into the shared --dir), a job printing the
table of what --dir keeps (table.sbatch, --no-run) and submit.sh, which
submits the array and then the table's job after it
(--dependency=afterany). The cells are counted by running the report with
--list-cells. Submitting again reruns only the cells not kept; a cell
whose task was cancelled or killed is taken over (docs/cluster.md).`,
		Example: `  placer cluster slurm --dir /shared/eq --parallel 16 --time 70m -- report equal-time --cpu --budgets 1m,5m,30m
  sh /shared/eq/slurm/submit.sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := clusterArgs(cmd, args, &o); err != nil {
				return err
			}
			if err := checkCluster(&o); err != nil {
				return err
			}
			o.Progress = s.Err
			res, err := launch.Slurm(cmd.Context(), o)
			if te := (*launch.NoTimeError)(nil); errors.As(err, &te) {
				return fail.Usagef("give --time (each task's time limit): %v", te)
			}
			return emit(s, asJSON, res, func() error { return writeCluster(s, res) }, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "dir", "", "the shared `DIR` every node sees: the cells' files, claims and the table")
	f.StringVar(&o.Out, "out", "", "write the scripts to `FOLDER` (default DIR/slurm)")
	f.DurationVar(&o.Time, "time", 0, "each task's time limit (default: twice the largest budget plus 10 minutes)")
	f.StringVar(&o.Partition, "partition", "", "the Slurm `PARTITION` (default: the cluster's)")
	f.StringArrayVar(&o.Sbatch, "sbatch", nil, "one more #SBATCH `OPTION` (repeatable), e.g. --sbatch=--account=ml")
	addClusterJobFlags(cmd, &o, &asJSON)
	return cmd
}

func newClusterK8sCmd(s *streams) *cobra.Command {
	o := launch.Options{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "k8s --image IMAGE --claim PVC [flags] -- report NAME [report flags]",
		Short: "Write a Kubernetes Indexed Job of a report's cells and a Job printing the table",
		Long: `Writes, in --out (default k8s), a Kubernetes Indexed Job (job.json: batch/v1,
completionMode Indexed, one completion per cell, --parallel pods at once),
whose pods run the report from --image (built with the repository's
Dockerfile) with the PersistentVolumeClaim --claim mounted at --dir; each
pod runs the cell of its index (JOB_COMPLETION_INDEX, which placer reads).
table-job.json prints the table of what the volume keeps (--no-run) once
they are done. The manifests are JSON (kubectl apply -f takes them).`,
		Example: `  docker build -t registry.example/placer:v1 . && docker push registry.example/placer:v1
  placer cluster k8s --image registry.example/placer:v1 --claim placer-cells --parallel 32 -- report equal-time --cpu
  kubectl apply -f k8s/job.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := clusterArgs(cmd, args, &o); err != nil {
				return err
			}
			if err := checkClusterK8s(&o); err != nil {
				return err
			}
			o.Progress = s.Err
			res, err := launch.K8s(cmd.Context(), o)
			return emit(s, asJSON, res, func() error { return writeCluster(s, res) }, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "dir", "/cells", "where the volume is mounted in each pod (the cells' shared `DIR`)")
	f.StringVar(&o.Out, "out", "", "write the manifests to `FOLDER` (default k8s)")
	f.StringVar(&o.Image, "image", "", "the container `IMAGE` (required; docker build with the repository's Dockerfile)")
	f.StringVar(&o.Claim, "claim", "", "the PersistentVolumeClaim `NAME` mounted at --dir (required; ReadWriteMany when pods run on several nodes)")
	f.StringVar(&o.Memory, "pod-memory", "2Gi", "memory each pod requests and is limited to (a Kubernetes quantity)")
	f.StringVar(&o.Namespace, "namespace", "", "the `NAMESPACE` written in the manifests (default: none, kubectl's)")
	addClusterJobFlags(cmd, &o, &asJSON)
	return cmd
}

func writeCluster(s *streams, res launch.Result) error {
	for _, f := range res.Files {
		if _, err := s.Out.Write([]byte(f + "\n")); err != nil {
			return err
		}
	}
	_, err := s.Out.Write([]byte(res.Submit + "\n"))
	return err
}

// checkCluster checks the report command after -- and the flags of both
// cluster commands.
func checkCluster(o *launch.Options) error {
	r := o.Report
	if n := o.RoundsWords(); n > 0 {
		for _, a := range r[n:] {
			name, _, _ := strings.Cut(a, "=")
			switch name {
			case "--rounds", "--cell", "--list-cells", "--json":
				return fail.Usagef("%s: the cluster job sets --rounds (to --dir) and --cell itself, and prints the report", name)
			}
		}
		if !slices.Contains(r, "--workers") && !slices.ContainsFunc(r, func(a string) bool { return strings.HasPrefix(a, "--workers=") }) {
			return fail.Usagef("%s as cells runs in synchronous rounds: give --workers K --steps N in its command", strings.Join(r[:n], " "))
		}
	} else {
		if len(r) < 2 || r[0] != "report" || !slices.Contains(launch.Reports, r[1]) {
			return fail.Usagef("give the report command after --, e.g. -- report equal-time --budgets 1m (one of: %s), or -- pretrain --scored --workers K ..., or -- regal train --workers K ...", strings.Join(launch.Reports, ", "))
		}
		for _, a := range r[2:] {
			name, _, _ := strings.Cut(a, "=")
			switch name {
			case "--dir", "--cell", "--worker", "--list-cells", "--no-run", "--json", "--plot":
				return fail.Usagef("%s: the cluster job sets --dir, --cell and --no-run itself, and prints the table (give %s to the cluster command, or leave it out)", name, name)
			}
		}
	}
	if o.Dir == "" {
		return fail.Usagef("give --dir: the folder every task shares")
	}
	if o.Parallel < 0 || o.CPUs < 0 || o.Time < 0 {
		return fail.Usagef("--parallel, --cpus-per-task and --time must not be negative")
	}
	return nil
}

// checkClusterK8s checks cluster k8s's flags.
func checkClusterK8s(o *launch.Options) error {
	if err := checkCluster(o); err != nil {
		return err
	}
	if o.Image == "" {
		return fail.Usagef("give --image: the image the pods run (docker build -t IMAGE . with the repository's Dockerfile)")
	}
	if o.Claim == "" {
		return fail.Usagef("give --claim: the PersistentVolumeClaim (ReadWriteMany) mounted at --dir in every pod")
	}
	if !filepath.IsAbs(o.Dir) {
		return fail.Usagef("--dir %q: want the absolute path where the volume is mounted in each pod, e.g. /cells", o.Dir)
	}
	if job, ok := o.K8sJobName(); !ok {
		return fail.Usagef("--name %q: want lower-case letters, digits and '-', at most 52 characters (a Kubernetes Job name)", job)
	}
	return nil
}
