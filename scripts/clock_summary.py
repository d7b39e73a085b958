#!/usr/bin/env python3
"""One line on the GPU's clock while scripts/gpu-check.sh benched: the SM clock's median, min and
max and the highest power over the busy samples, and the share of them under the driver's power
cap (docs/perf/knowledge.md, the power cap: the rows bound by tensor work run ~10% slower under
it).

Input: nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active
--format=csv,noheader,nounits lines. Samples with the idle reason (bit 0x1) are left out; so are
lines that do not parse (nvidia-smi's own messages).

Usage: scripts/clock_summary.py CLOCKS_CSV
"""
import statistics
import sys

IDLE, SW_POWER_CAP, HW_SLOWDOWN, SW_THERMAL, HW_THERMAL, HW_POWER_BRAKE = 0x1, 0x4, 0x8, 0x20, 0x40, 0x80


def summarize(lines):
    mhz, watts, capped, other = [], [], 0, 0
    for line in lines:
        f = [x.strip() for x in line.split(",")]
        if len(f) < 4:
            continue
        try:
            clock, reasons = float(f[1]), int(f[3], 16)
        except ValueError:
            continue
        try:
            power = float(f[2])
        except ValueError:  # [N/A] on boards that do not report it
            power = float("nan")
        if reasons & IDLE:
            continue
        mhz.append(clock)
        if power == power:
            watts.append(power)
        capped += bool(reasons & SW_POWER_CAP)
        other += bool(reasons & (HW_SLOWDOWN | SW_THERMAL | HW_THERMAL | HW_POWER_BRAKE))
    if not mhz:
        return "clocks during the benches: no busy samples"
    n = len(mhz)
    power = "power up to %.0f W" % max(watts) if watts else "power not reported"
    return ("clocks during the benches: SM %.0f MHz median, %.0f min, %.0f max, %s over %d busy "
            "samples; SW power cap in %.0f%% of them, thermal or HW slowdown in %.0f%%"
            % (statistics.median(mhz), min(mhz), max(mhz), power, n, 100.0 * capped / n,
               100.0 * other / n))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as fh:
        print(summarize(fh))
