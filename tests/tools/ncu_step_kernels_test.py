#!/usr/bin/env python3
"""scripts/ncu_step_kernels.py on made-up Nsight Compute CSV: the last complete step is taken,
kernels are named without namespaces and parameters, durations in any of ncu's units (thousands
separators included) are summed per kernel, and a run without a complete step is refused."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "ncu_step_kernels.py")
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
          '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
          '"Metric Value"\n')


def row(i, name, unit, value):
    return (f'"{i}","1","mlaspec","h","{name}","1","7","(256, 1, 1)","(1, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","gpu__time_duration.sum","{unit}","{value}"\n')


def run(text):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(text)
    try:
        return subprocess.run([sys.executable, SCRIPT, f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)


def main():
    embed = "void mlaspec::model::gpu::(anonymous namespace)::embed_kernel(const int *, float *)"
    gemv = ("void mlaspec::model::gpu::(anonymous namespace)::gemv_kernel<float, 1>"
            "(const unsigned short *, long)")
    argmax = "model::<unnamed>::argmax_rows_kernel(const float *, long, int *)"
    attn = "void attn::verify_kernel<attn::Traits<unsigned short, 64>>(attn::VerifyParams)"
    text = "==PROF== Connected to process 1\n" + HEADER
    rows = [(embed, "ns", "9,000"), (gemv, "ns", "1,000"), (argmax, "ns", "500"),  # step 1
            (embed, "ns", "2,000"), (gemv, "ns", "6,000"), (gemv, "usecond", "7.5"),
            (attn, "nsecond", "1,500"), (argmax, "ns", "3,000"),  # step 2, the last complete
            (embed, "ns", "100"), (gemv, "ns", "100")]  # an unfinished step
    for i, (n, u, v) in enumerate(rows):
        text += row(i, n, u, v)
    text += "==PROF== Disconnected from process 1\n"
    r = run(text)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    checks = [
        "5 kernel launches in the step, 20.0 µs of kernel time",
        "| `gemv_kernel<float, 1>` | 2 | 13.5 | 6.75 | 67.5% |",
        "| `argmax_rows_kernel` | 1 | 3.0 | 3.00 | 15.0% |",
        "| `embed_kernel` | 1 | 2.0 | 2.00 | 10.0% |",
        "| `verify_kernel<Traits<unsigned short, 64>>` | 1 | 1.5 | 1.50 | 7.5% |",
    ]
    for c in checks:
        assert c in out, f"missing {c!r} in:\n{out}"
    # Largest first.
    assert out.index("gemv_kernel") < out.index("argmax_rows_kernel") < out.index("embed_kernel")
    # No complete step; an unknown unit.
    r = run(HEADER + row(0, embed, "ns", "10"))
    assert r.returncode != 0 and "no complete step" in r.stderr, r.stderr
    r = run(HEADER + row(0, embed, "furlong", "10"))
    assert r.returncode != 0 and "unknown duration unit" in r.stderr, r.stderr
    print("all checks passed")


if __name__ == "__main__":
    main()
