package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/placer/placer/internal/earlysig"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

// streams are the command's standard streams: data goes to Out, progress
// and status to Err.
type streams struct {
	In       io.Reader
	Out, Err io.Writer
	// kept says, for a run stopped by a signal, what it kept and where
	// ("best result so far written to r.json", "nothing found yet, nothing
	// written"); run adds it to the line saying the run was interrupted.
	kept string
}

// commandFactories are the subcommands; each command file registers its
// constructor in an init function.
var commandFactories []func(s *streams) *cobra.Command

func register(f func(s *streams) *cobra.Command) { commandFactories = append(commandFactories, f) }

// usagef makes a usage error (exit 2): a mistake in how the command was
// called, as opposed to bad input data or a failed run (exit 1).
func usagef(format string, a ...any) error { return fail.Usagef(format, a...) }

// runError marks an error returned by a command's own RunE: any other
// error out of cobra is cobra's own (unknown command, wrong argument
// count, bad flag), a usage error.
type runError struct{ err error }

func (e runError) Error() string { return e.err.Error() }
func (e runError) Unwrap() error { return e.err }

// rootLong is placer --help's text: the cluster planner first (what most
// users come for), op placement second. TestRootHelp runs its cluster
// commands.
const rootLong = `placer plans a training run on a cluster of GPUs. No GPU is needed: a
performance model costs every plan.

The cluster planner. Give it a transformer (a Hugging Face config.json as
hf:PATH, a preset such as llama3-70b, or gpt:/llama: and its shape), the
run's sequence and batch, and a cluster. placer search tries every plan of
tensor, pipeline, context, data and expert parallelism, micro-batch size
and recomputation, and returns the fastest one that fits in memory. Each
figure carries its error on published runs of the same kind. placer
export writes the plan for Megatron-LM, Megatron-Bridge (LoRA too),
torchtitan, DeepSpeed or a torch plan:

  placer search --workload llama3-8b:seq=8192,batch=256 --cluster dgx-h100:4 -o plan.json
  placer export --workload llama3-8b:seq=8192,batch=256 --cluster dgx-h100:4 --plan plan.json --to megatron -o plan.sh

Op placement. For one computation graph (the papers' workloads, a graph
file, a PyTorch model's training step), placer decides which GPU runs each
op, in what order, and which ops are fused:

  placer search --workload trxl2 --gpus 2 -o trxl2.json

README.md and docs/ say more.`

func newRootCmd(s *streams) *cobra.Command {
	var wide bool
	root := &cobra.Command{
		Use:           "placer",
		Short:         "Plan a training run on a cluster of GPUs: the parallelism of a transformer, the placement of a graph's ops",
		Long:          rootLong,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Flag values are checked against their documented ranges
		// (flagRanges, docs/inputs.md), and output paths against the file
		// system (checkOutputs) and the files it reads
		// (checkInputsNotOutputs), and the files it reads are there
		// (checkInputsReadable), before any command runs.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if wide {
				s.Out = report.Wide{Writer: s.Out}
			}
			if err := checkFlags(cmd); err != nil {
				return err
			}
			if err := checkPathValues(cmd, s); err != nil {
				return err
			}
			must, err := checkInputsNotOutputs(cmd)
			if err != nil {
				return err
			}
			if err := checkOutputs(cmd); err != nil {
				return err
			}
			return checkInputsReadable(cmd, must)
		},
	}
	root.PersistentFlags().BoolVar(&wide, "wide", false, fmt.Sprintf("tables with every column, however wide (default: at most %d columns)", report.MaxWidth))
	root.SetVersionTemplate("{{.Version}}\n")
	// Flag help wrapped at the tables' width (pflag's FlagUsagesWrapped),
	// in cobra's own usage template otherwise unchanged.
	cobra.AddTemplateFunc("wrappedFlagUsages", wrappedFlagUsages)
	usage := strings.ReplaceAll(root.UsageTemplate(), ".LocalFlags.FlagUsages", "wrappedFlagUsages .LocalFlags")
	root.SetUsageTemplate(strings.ReplaceAll(usage, ".InheritedFlags.FlagUsages", "wrappedFlagUsages .InheritedFlags"))
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fail.Usagef("%w (see '%s --help')", err, c.CommandPath())
	})
	for _, f := range commandFactories {
		root.AddCommand(f(s))
	}
	markRunErrors(root)
	addCompletions(root)
	return root
}

// markRunErrors wraps every command's RunE so that its errors carry
// runError.
func markRunErrors(c *cobra.Command) {
	if f := c.RunE; f != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if err := f(cmd, args); err != nil {
				return runError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markRunErrors(sub)
	}
}

// sameSignal is how long after the first signal another of its kind is
// the same interrupt delivered twice: coreutils' timeout sends its signal
// to the command and then to the command's whole process group
// (src/timeout.c, cleanup(), coreutils 9.1), so placer, in that group,
// gets it twice within microseconds, read a moment apart on a loaded
// machine. A person's second Ctrl-C comes later.
const sameSignal = time.Second

// signalContext is a context cancelled, with fail.Interrupted as its
// cause, by the first SIGINT or SIGTERM; a second one (but one of the
// same kind within sameSignal of the first) exits at once.
func signalContext(errw io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := earlysig.C
	done := make(chan struct{})
	go func() {
		var first os.Signal
		select {
		case first = <-ch:
			cancel(fail.Interrupted{Signal: first})
		case <-done:
			return
		}
		at := time.Now()
		for {
			select {
			case sig := <-ch:
				if sig == first && time.Since(at) < sameSignal {
					continue
				}
				fmt.Fprintf(errw, "placer: second %s: stopping without writing anything more\n", fail.SignalName(sig))
				os.Exit(fail.Interrupt)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// run executes the CLI and maps errors to exit codes, in this one place
// (fail.Code): 0 success, 2 a wrong command line, 130 interrupted by
// SIGINT or SIGTERM, 1 everything else (bad input, failed runs).
func run(args []string, in io.Reader, out, errw io.Writer) int {
	ctx, stop := signalContext(errw)
	defer stop()
	return runContext(ctx, args, in, out, errw)
}

// runContext is run under ctx (a test cancels it as a signal would).
func runContext(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	// Every write to standard output is checked (docs/robustness.md): a closed or
	// full standard output fails the command, exit 1, not "wrote
	// standard output" and 0.
	cout := &checkedWriter{w: out}
	s := &streams{In: in, Out: cout, Err: errw}
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var re runError
	if err != nil && !asRunError(err, &re) {
		err = fail.AsUsage(err) // cobra's own: unknown command, argument count
	}
	if cout.err != nil && (err == nil || errors.Is(err, cout.err)) {
		err = runError{fmt.Errorf("cannot write standard output: %w", unwrapPathErr(cout.err))}
	}
	cause := context.Cause(ctx)
	interrupted := cause != nil && ctx.Err() != nil
	switch {
	case interrupted && (err == nil || isCanceled(err)):
		msg := fail.Line(cause)
		if s.kept != "" {
			msg += "; " + s.kept
		}
		fmt.Fprintf(errw, "placer: %s\n", msg)
	case err != nil:
		fmt.Fprintf(errw, "placer: %s\n", fail.Line(err))
	}
	return fail.Code(err, interrupted)
}

// wrappedFlagUsages is f's help wrapped at the tables' width. A list's
// default (a method list, a workload list) is shown with a space after
// each comma so that it wraps too: pflag breaks lines only at spaces.
func wrappedFlagUsages(f *pflag.FlagSet) string {
	f.VisitAll(func(fl *pflag.Flag) {
		if strings.HasSuffix(fl.Value.Type(), "Slice") && !strings.Contains(fl.DefValue, ", ") {
			fl.DefValue = strings.ReplaceAll(fl.DefValue, ",", ", ")
		}
	})
	return f.FlagUsagesWrapped(report.MaxWidth)
}

// checkedWriter is a writer that keeps its first error: a command's
// standard output, whose every write is checked once the command ends
// (the writes themselves are many, in every report).
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(b)
	if err != nil {
		c.err = err
	}
	return n, err
}

// unwrapPathErr is err without an *fs.PathError's operation and path
// ("bad file descriptor", not "write /dev/stdout: bad file descriptor").
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
