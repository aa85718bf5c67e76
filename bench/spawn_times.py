#!/usr/bin/env python3
"""Wall and CPU time of starting and finishing commands, without a shell in between.

    spawn_times.py RUNS -- CMD ARG... [-- CMD ARG...]...

Runs the commands alternated in one loop, RUNS times after three warm-up
rounds (page cache), each through posix_spawn with stdout and stderr on
/dev/null, timed with perf_counter_ns around spawn and wait. A shell's
`date +%s%N` pair would add two process starts of its own to every figure
(about 3 ms on the 2-core build VM). Prints one line per command, in
milliseconds: "median fastest p90", then the median CPU time of the
command's whole process tree (user + system, from wait4's rusage, which
counts every waited-for descendant): on a machine with idle cores, wall
time moves with scheduling and frequency by more than a few percent from
round to round, while CPU time counts the work each command did.
"""
import os
import statistics
import sys
import time


def commands(args):
    cmds, cur = [], None
    for a in args:
        if a == "--":
            cur = []
            cmds.append(cur)
        elif cur is None:
            sys.exit("spawn_times: commands start with --")
        else:
            cur.append(a)
    if not cmds or not all(cmds):
        sys.exit("spawn_times: give at least one command after --")
    return cmds


def main():
    runs, cmds = int(sys.argv[1]), commands(sys.argv[2:])
    null = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    times = [[] for _ in cmds]
    cpu = [[] for _ in cmds]
    for i in range(runs + 3):
        for k, argv in enumerate(cmds):
            start = time.perf_counter_ns()
            pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
            _, _, usage = os.wait4(pid, 0)
            if i >= 3:
                times[k].append((time.perf_counter_ns() - start) / 1e6)
                cpu[k].append((usage.ru_utime + usage.ru_stime) * 1e3)
    for t, c in zip(times, cpu):
        t.sort()
        print(f"{statistics.median(t):.2f} {t[0]:.2f} {t[int(len(t) * 0.9)]:.2f} {statistics.median(c):.2f}")


main()
