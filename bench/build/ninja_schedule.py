#!/usr/bin/env python3
"""Replays a cold build's schedule the way ninja 1.11 runs it, to compare step orders without
rebuilding (issue 34: the README's main command on 2 cores).

Usage: ninja_schedule.py BUILD_DIR [-j N] [--cores C] [--targets T ...] [--first REGEX ...] [--lpt]

Reads BUILD_DIR/build.ninja (the edges, their inputs and the order they are declared in) and
BUILD_DIR/.ninja_log (how long each step took in the build that wrote it, which should be a cold
build of the same tree). Ninja 1.11 keeps the steps whose inputs are done in a set ordered by the
edge's position in the manifest and starts the first ones whenever a slot is free; phony edges
take no slot and no time. (Replaying a cold main-preset build this way gave its measured wall
time to 0.1 s.) The script replays that with N slots (default 3, ninja's default on a
2-CPU machine) and prints the makespan, how long fewer than C (default 2) steps ran at the end, and
the last steps, then the same for each variant asked for:
  --first REGEX   edges whose first output matches REGEX move to the front of the manifest order
                  (in their own order), as if their CMake targets were declared first;
  --lpt           ready steps start longest first (what a scheduler that knew the times would do).
A replay assumes every step takes what it took in the logged build; on a 2-core machine two
concurrent compiles each run a little slower than one alone, which the log already contains.
"""
import argparse
import heapq
import os
import re
import sys


def read_manifest(path):
    """Returns a list of edges (outs, ins, rule) in declaration order; includes are followed."""
    edges = []
    base = os.path.dirname(path)

    def parse(file):
        text = open(file).read().replace("$\n", "")
        for line in text.split("\n"):
            m = re.match(r"(include|subninja) (\S+)", line)
            if m:
                parse(os.path.join(base, m.group(2)))
                continue
            if not line.startswith("build "):
                continue
            # Split on unescaped ':' (ninja escapes ':' in paths as '$:').
            body = line[len("build "):].replace("$ ", "\x00").replace("$:", "\x01")
            outs_part, rest = body.split(":", 1)
            rest = rest.strip()
            rule, _, ins_part = rest.partition(" ")
            ins_part = ins_part.split("|@")[0]
            explicit_implicit, _, order_only = ins_part.partition("||")
            ins = explicit_implicit.replace("|", " ").split() + order_only.split()
            outs = outs_part.replace("|", " ").split()

            def unesc(s):
                return s.replace("\x00", " ").replace("\x01", ":").replace("$$", "$")

            edges.append(([unesc(o) for o in outs], [unesc(i) for i in ins], rule))

    parse(path)
    return edges


def read_log(path):
    """Duration in seconds of each output in the last build the log recorded."""
    times = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _mtime, out, *_ = line.split("\t")
            times[out] = (int(end) - int(start)) / 1000.0
    return times


def wanted_graph(edges, times, targets):
    """The edges the targets need, each one's duration, and for each edge the wanted edges that
    read its outputs and how many wanted edges it waits for."""
    producer = {o: i for i, (outs, _ins, _rule) in enumerate(edges) for o in outs}
    wanted = set()
    stack = [producer[t] for t in targets]
    while stack:
        e = stack.pop()
        if e not in wanted:
            wanted.add(e)
            stack.extend(producer[i] for i in edges[e][1] if i in producer)
    dur = {e: max((times.get(o, 0.0) for o in edges[e][0]), default=0.0) for e in wanted}
    unlogged = [e for e in wanted if edges[e][2] != "phony" and not any(o in times for o in edges[e][0])]
    if unlogged:  # they replay as taking no time: the log is not of a full build of these targets
        print(f"warning: {len(unlogged)} steps have no time in the log, e.g. {edges[unlogged[0]][0][0]}",
              file=sys.stderr)
    users, waits = {}, {}
    for e in wanted:
        deps = {producer[i] for i in edges[e][1] if i in producer and producer[i] in wanted}
        waits[e] = len(deps)
        for d in deps:
            users.setdefault(d, []).append(e)
    return dur, users, waits


def replay(edges, graph, slots, order, lpt):
    dur, users, waits = graph
    waiting = dict(waits)
    rank = {e: pos for pos, e in enumerate(order)}

    def key(e):
        return (-dur[e], rank[e]) if lpt else (rank[e],)

    ready = [(key(e), e) for e in dur if waiting[e] == 0]
    heapq.heapify(ready)
    running = []  # (end time, edge)
    now, log = 0.0, []

    def finish(e):
        for u in users.get(e, []):
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (key(u), u))

    while ready or running:
        while ready and len(running) < slots:
            _, e = heapq.heappop(ready)
            if edges[e][2] == "phony" or dur[e] == 0.0:
                finish(e)
                continue
            heapq.heappush(running, (now + dur[e], e))
            log.append((now, now + dur[e], e))
        if not running:
            continue
        now, e = heapq.heappop(running)
        finish(e)
    return now, log


def report(name, edges, makespan, log, cores):
    print(f"{name}: {makespan:.1f} s")
    # The tail: from the last moment at which `cores` steps were running to the end, some core idled.
    events = sorted([(start, 1) for start, _end, _e in log] + [(end, -1) for _start, end, _e in log],
                    key=lambda ev: (ev[0], ev[1]))
    running, last_full = 0, 0.0
    for t, delta in events:
        if running >= cores:
            last_full = t
        running += delta
    print(f"  fewer than {cores} steps ran for the last {makespan - last_full:.1f} s; the last steps to end:")
    for start, end, e in sorted(log, key=lambda s: s[1])[-3:]:
        print(f"    {start:7.1f} -> {end:7.1f}  {edges[e][0][0]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir")
    ap.add_argument("-j", type=int, default=3, help="parallel steps (ninja's default on 2 CPUs: 3)")
    ap.add_argument("--cores", type=int, default=2, help="CPUs, for the idle tail it reports")
    ap.add_argument("--targets", nargs="+", default=["all"])
    ap.add_argument("--first", action="append", default=[])
    ap.add_argument("--lpt", action="store_true")
    a = ap.parse_args()
    edges = read_manifest(os.path.join(a.build_dir, "build.ninja"))
    times = read_log(os.path.join(a.build_dir, ".ninja_log"))
    missing = [t for t in a.targets if not any(t in outs for outs, _i, _r in edges)]
    if missing:
        sys.exit(f"no edge builds {missing} in {a.build_dir}/build.ninja")
    graph = wanted_graph(edges, times, a.targets)
    base = list(range(len(edges)))
    span, log = replay(edges, graph, a.j, base, False)
    report("manifest order (ninja 1.11)", edges, span, log, a.cores)
    if a.first:
        pats = [re.compile(p) for p in a.first]
        front = list(dict.fromkeys(e for p in pats for e in base if p.search(edges[e][0][0])))
        moved = set(front)
        span, log = replay(edges, graph, a.j, front + [e for e in base if e not in moved], False)
        report(f"with {a.first} first", edges, span, log, a.cores)
    if a.lpt:
        span, log = replay(edges, graph, a.j, base, True)
        report("longest ready step first", edges, span, log, a.cores)


if __name__ == "__main__":
    main()
