package claim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
)

// DefaultLease is a claim's lease when none is given: a worker that
// stops renewing its claim (killed, or its machine gone) is taken over
// this long after its last renewal.
const DefaultLease = time.Minute

// ErrHeld is Take's error when another owner holds a live claim.
var ErrHeld = errors.New("claim: claimed by another worker")

// ErrLost is Keep's cause when the claim was taken over (its owner did
// not renew it within its lease).
var ErrLost = errors.New("claim: taken over by another worker")

// Owner is who holds a claim.
type Owner struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

func (o Owner) String() string { return fmt.Sprintf("%s pid %d", o.Host, o.PID) }

var (
	selfOnce sync.Once
	self     Owner
)

// Self is this process as an owner.
func Self() Owner {
	selfOnce.Do(func() {
		host, err := os.Hostname()
		if err != nil {
			host = "unknown"
		}
		self = Owner{Host: host, PID: os.Getpid(), Started: time.Now().UTC()}
	})
	return self
}

// The states of a claim.
const (
	Running  = "running"  // its owner works on it (while the lease is live)
	Done     = "done"     // its owner finished the work and wrote its result
	Released = "released" // its owner stopped without finishing (interrupted, failed)
)

// File is a claim as kept in PATH.claim.G.
type File struct {
	Owner      Owner     `json:"owner"`
	Generation int       `json:"generation"`
	State      string    `json:"state"`
	Renewed    time.Time `json:"renewed"`
	Lease      float64   `json:"lease_s"`
	// Note says why a claim was released (an error), if it says.
	Note string `json:"note,omitempty"`
}

// Live says whether f still holds its work at now: running, renewed
// within its lease, and (when its owner is a process of this host) that
// process alive.
func (f File) Live(now time.Time) bool {
	if f.State != Running {
		return false
	}
	if now.After(f.Renewed.Add(time.Duration(f.Lease * float64(time.Second)))) {
		return false
	}
	if me := Self(); f.Owner.Host == me.Host && f.Owner.PID != me.PID && !alive(f.Owner.PID) {
		return false
	}
	return true
}

// Name is the file of path's claim of generation gen.
func Name(path string, gen int) string { return path + ".claim." + strconv.Itoa(gen) }

// History is every claim of path, oldest generation first. A claim file
// that cannot be read is left out.
func History(path string) ([]File, error) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	prefix := filepath.Base(path) + ".claim."
	var gens []int
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), prefix); ok {
			if g, err := strconv.Atoi(rest); err == nil && g >= 0 {
				gens = append(gens, g)
			}
		}
	}
	sort.Ints(gens)
	var out []File
	for _, g := range gens {
		if f, err := read(Name(path, g)); err == nil {
			out = append(out, f)
		}
	}
	return out, nil
}

func read(name string) (File, error) {
	var f File
	data, err := bounded.ReadFile(name, bounded.Config, "a claim file")
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("claim %s: %w", name, err)
	}
	return f, nil
}

// latest is path's claim of the highest generation (ok false = none).
func latest(path string) (File, bool, error) {
	h, err := History(path)
	if err != nil || len(h) == 0 {
		return File{}, false, err
	}
	return h[len(h)-1], true, nil
}

// Claim is a claim this process holds.
type Claim struct {
	path string
	mu   sync.Mutex
	file File
}

// Take claims path for owner with lease (0 = DefaultLease): a new claim
// of the next generation when there is none, or the latest is not live.
// When another owner's claim is live, the error is ErrHeld (wrapped,
// naming it) and holder is that claim.
func Take(path string, owner Owner, lease time.Duration) (c *Claim, holder File, err error) {
	if lease <= 0 {
		lease = DefaultLease
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, File{}, err
	}
	for try := 0; try < 8; try++ {
		last, ok, err := latest(path)
		if err != nil {
			return nil, File{}, err
		}
		gen := 0
		if ok {
			if last.Live(time.Now()) {
				return nil, last, fmt.Errorf("%w (%s, renewed %s)", ErrHeld, last.Owner, last.Renewed.Format(time.RFC3339))
			}
			gen = last.Generation + 1
		}
		f := File{Owner: owner, Generation: gen, State: Running, Renewed: time.Now().UTC(), Lease: lease.Seconds()}
		created, err := create(Name(path, gen), f)
		if err != nil {
			return nil, File{}, err
		}
		if created {
			return &Claim{path: path, file: f}, File{}, nil
		}
		// Another worker made generation gen first: look again.
	}
	return nil, File{}, fmt.Errorf("%s: %w (the claims change faster than they can be read)", path, ErrHeld)
}

// create makes name holding f unless it exists (false, nil then).
func create(name string, f File) (bool, error) {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if err := json.NewEncoder(tmp).Encode(f); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return false, err
	}
	if err := os.Link(tmp.Name(), name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// File is the claim as last written.
func (c *Claim) File() File {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.file
}

// Lost says whether another worker has taken the work over (a claim of
// a later generation exists).
func (c *Claim) Lost() bool {
	_, err := os.Stat(Name(c.path, c.file.Generation+1))
	return err == nil
}

// write rewrites the claim with state (and note), renewed now.
func (c *Claim) write(state, note string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.file
	f.State, f.Note, f.Renewed = state, note, time.Now().UTC()
	if err := atomicfile.Write(Name(c.path, f.Generation), func(w io.Writer) error { return json.NewEncoder(w).Encode(f) }); err != nil {
		return err
	}
	c.file = f
	return nil
}

// Renew extends the lease from now; ErrLost when the work was taken over.
func (c *Claim) Renew() error {
	if c.Lost() {
		return ErrLost
	}
	return c.write(Running, "")
}

// Finish marks the claim done: its owner wrote the work's result.
func (c *Claim) Finish() error { return c.write(Done, "") }

// Release marks the claim released: its owner stopped without finishing
// (why: note), and another worker may take the work at once.
func (c *Claim) Release(note string) error { return c.write(Released, note) }

// Keep renews the claim every third of its lease until the returned stop
// is called (which waits for the renewer to end). If the claim is lost,
// or cannot be renewed, lost is called with why (once) and renewing
// stops.
func (c *Claim) Keep(lost func(error)) (stop func()) {
	every := time.Duration(c.File().Lease * float64(time.Second) / 3)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := c.Renew(); err != nil {
					lost(err)
					return
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
