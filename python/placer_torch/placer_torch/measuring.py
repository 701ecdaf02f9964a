"""What placer profile's two measurements (opprofile: a model's ops;
profile.measure: a layer's shard shapes and the collectives) share:
their lines to placer (emit: one JSON object a line on stdout, which
placer's Go side reads as each arrives; say: progress on stderr) and the
device they ran on (cpu_name, driver). No torch import."""

import json
import platform
import subprocess
import sys


def emit(obj):
    """One JSON object on its own line on stdout, flushed: placer keeps
    every line it got, so an interrupted run keeps what it measured."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def say(msg):
    """A progress line on stderr, which placer passes to its user."""
    sys.stderr.write("profile: %s\n" % msg)
    sys.stderr.flush()


def cpu_name():
    """The CPU's model name (/proc/cpuinfo's), else what platform says."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def driver():
    """The NVIDIA driver's version as nvidia-smi reports it, or "" where
    there is none."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout
        return out.strip().splitlines()[0] if out.strip() else ""
    except (OSError, subprocess.SubprocessError):
        return ""
