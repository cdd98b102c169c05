#!/usr/bin/env python3
"""Runs the cjax CLI on hostile input, thousands of times, and counts what must never happen:
crashes (a signal), hangs (past the time limit) and internal errors (exit 3). Every other outcome
must be exit 0, 1 or 2, with an error on standard error as one line `cjax: <where>: <message>`
and nothing on standard output when it fails.

The inputs: programs nested past every reader's limit (text and JSON, calls and params), arrays
too large for memory or for int64, ranks past the limit, literals the printer writes (nan, inf),
mutants of every jaxpr in the repository and ../shared (bytes flipped, lines cut, tokens
swapped), malformed .npy inputs, option values that are out of range or conflicting, and the
test plugins (including those returning null). Reproducible: --seed picks the mutants.

Usage: scripts/adversarial.py [--cli build/tools/cjax] [--plugins build/tests/cli/plugin]
                              [--mutants 1500] [--seed 0] [--timeout 60] [--jobs 2]
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def text_nest(kind, depth):
    """A text jaxpr with `depth` nested calls of `kind` (jit, remat2 or scan)."""
    inner = "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"
    for _ in range(depth):
        if kind == "scan":
            inner = ("{ lambda ; a:f32[3]. let b:f32[3] = scan[_split_transpose=False jaxpr=%s "
                     "length=1 linear=(False,) num_carry=1 num_consts=0 reverse=False unroll=1] a "
                     "in (b,) }" % inner)
        elif kind == "remat2":
            inner = ("{ lambda ; a:f32[3]. let b:f32[3] = remat2[differentiated=False jaxpr=%s "
                     "policy=None prevent_cse=True] a in (b,) }" % inner)
        else:
            inner = "{ lambda ; a:f32[3]. let b:f32[3] = jit[name=f jaxpr=%s] a in (b,) }" % inner
    return inner


def scan_const_nest(depth, length, outer_length=None):
    """`depth` nested scans of `length` steps (the outermost of `outer_length`), each body reading
    a const and a carry: the shape that once cost the memory model 2^depth walks (a carry fixpoint
    of two rounds per level, two simulated iterations per scan) and MLIR's bufferization time
    exponential in the depth of a loop nest. An outermost length of 0 keeps running it instant."""
    inner = "{ lambda ; x:f32[3] a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b x in (c,) }"
    for level in range(depth):
        n = outer_length if level == depth - 1 and outer_length is not None else length
        inner = ("{ lambda ; x:f32[3] a:f32[3]. let b:f32[3] = scan[_split_transpose=False "
                 "jaxpr=%s length=%d linear=(False, False) num_carry=1 num_consts=1 reverse=False "
                 "unroll=1] x a; c:f32[3] = sin b in (c,) }" % (inner, n))
    return inner


def json_nest(kind, depth):
    """A JSON jaxpr with `depth` nested calls, each body a separate entry of "jaxprs"."""
    def aval():
        return {"dtype": "f32", "shape": [3], "weak_type": False}

    jaxprs = []
    for level in range(depth + 1):
        eqn = {"primitive": "sin", "inputs": [{"var": 0}], "outputs": [{"id": 1, "aval": aval()}],
               "params": {"accuracy": None}}
        if level > 0:
            params = {"name": "f", "jaxpr": {"jaxpr": level - 1}}
            if kind == "scan":
                params = {"jaxpr": {"jaxpr": level - 1}, "length": 1, "linear": [False],
                          "num_carry": 1, "num_consts": 0, "reverse": False, "unroll": 1,
                          "_split_transpose": False}
            eqn = {"primitive": kind, "inputs": [{"var": 0}],
                   "outputs": [{"id": 1, "aval": aval()}], "params": params}
        jaxprs.append({"constvars": [], "invars": [{"id": 0, "aval": aval()}], "eqns": [eqn],
                       "outvars": [{"var": 1}]})
    return json.dumps({"format": "cjax-jaxpr", "version": 1, "main": depth, "jaxprs": jaxprs})


def deep_params_json(depth):
    doc = json.loads(json_nest("jit", 0))
    doc["jaxprs"][0]["eqns"][0]["params"]["accuracy"] = "NESTED"
    return json.dumps(doc).replace('"NESTED"', "[" * depth + "1" + "]" * depth)


def rank_program(rank):
    shape = ",".join(["1"] * rank)
    return "{ lambda ; a:f32[%s]. let b:f32[%s] = sin a in (b,) }" % (shape, shape)


def fixed_inputs():
    """(name, text) of the hand-made hostile programs."""
    out = []
    for kind in ("jit", "remat2", "scan"):
        out.append((f"text_{kind}_150.jaxpr", text_nest(kind, 150)))
        out.append((f"text_{kind}_40.jaxpr", text_nest(kind, 40)))
        out.append((f"json_{kind}_10000.json", json_nest(kind, 10000)))
        out.append((f"json_{kind}_90.json", json_nest(kind, 90)))
    out.append(("scan_const_49x1.jaxpr", scan_const_nest(49, 1)))
    out.append(("scan_const_30x2_outer0.jaxpr", scan_const_nest(30, 2, outer_length=0)))
    out.append(("scan_const_12x2.jaxpr", scan_const_nest(12, 2)))
    out.append(("json_params_100000.json", deep_params_json(100000)))
    out.append(("text_parens_100000.jaxpr",
                "{ lambda ; a:f32[3]. let b:f32[3] = foo[k=" + "(" * 100000 + "] a in (b,) }"))
    for shape in ("100000,100000,100000", "50000,50000", "10000000000,10000000000,10000000000",
                  "9223372036854775807", "-1", "0,0"):
        out.append((f"shape_{len(out)}.jaxpr",
                    "{ lambda ; a:f32[%s]. let b:f32[%s] = sin a in (b,) }" % (shape, shape)))
    for n in ("1000000000000000", "2500000000", "1000000000"):
        out.append((f"broadcast_{n}.jaxpr",
                    "{ lambda ; . let a:f32[%s] = broadcast_in_dim[broadcast_dimensions=() "
                    "shape=(%s,) sharding=None] 1.0:f32[]; b:f32[] = reduce_sum[axes=(0,) "
                    "out_sharding=None] a in (b,) }" % (n, n)))
    for rank in (5000, 2000, 1000, 65, 64, 33):
        out.append((f"rank_{rank}.jaxpr", rank_program(rank)))
    for lit in ("nan", "inf", "-inf"):
        out.append((f"literal_{lit}.jaxpr",
                    "{ lambda ; a:f32[]. let b:f32[] = add a %s:f32[]; c:f32[] = mul b b in (c,) }"
                    % lit))
    out.append(("int_output.jaxpr",
                "{ lambda ; a:i32[3]. let b:i32[] = reduce_sum[axes=(0,) out_sharding=None] a "
                "in (b,) }"))
    out.append(("empty.jaxpr", ""))
    out.append(("binary.jaxpr", "\x00\xff\x93NUMPY" * 10))
    return out


def corpus():
    files = []
    for base in (os.path.join(ROOT, "tests/golden"), os.path.join(ROOT, "fuzz/seeds"),
                 os.path.join(ROOT, "../shared/reference/wild-jaxprs")):
        for d, _, names in os.walk(base):
            files += [os.path.join(d, n) for n in names if n.endswith((".jaxpr", ".json"))]
    return sorted(files)


def mutate(text, rng):
    ops = ["flip", "cut", "dup", "swap", "digits", "delete"]
    op = rng.choice(ops)
    if not text:
        return "x"
    i = rng.randrange(len(text))
    if op == "flip":
        return text[:i] + chr(rng.randrange(32, 127)) + text[i + 1:]
    if op == "cut":
        return text[:i]
    if op == "dup":
        j = min(len(text), i + rng.randrange(1, 200))
        return text[:j] + text[i:j] * rng.randrange(1, 50) + text[j:]
    if op == "delete":
        j = min(len(text), i + rng.randrange(1, 40))
        return text[:i] + text[j:]
    if op == "digits":
        return re.sub(r"\d+", lambda m: rng.choice(["0", "-1", "99999999999999999999", "65536",
                                                     m.group(0)]), text, count=rng.randrange(1, 5))
    tokens = re.split(r"(\s+)", text)
    a, b = rng.randrange(len(tokens)), rng.randrange(len(tokens))
    tokens[a], tokens[b] = tokens[b], tokens[a]
    return "".join(tokens)


COMMANDS = ["jaxpr {f}", "jaxpr {f} --json", "residuals {f}", "fwd-bwd {f}", "grad {f}",
            "grad {f} --backend interpreter", "run {f}", "run {f} --backend interpreter",
            "lower {f} --emit lowered", "lower {f} --emit llvm", "memory {f}",
            "bench {f} -r 1 --warmup 0", "residuals {f} --policy nothing_saveable",
            "residuals {f} --budget 1KiB"]

OPTIONS = [
    "grad --example tutorial/f --bogus", "grad --example tutorial/f --wrt W1",
    "grad --example tutorial/f --wrt nope", "run --example tutorial/f --seed -1",
    "run --example tutorial/f --seed 99999999999999999999999", "run --example tutorial/f --seed x",
    "residuals --example tutorial/f --budget ''", "residuals --example tutorial/f --budget -5MiB",
    "residuals --example tutorial/f --budget 1e400B", "run --example tutorial/f --seed 1 --inputs 1,2,3,4",
    "run --example tutorial/f --inputs 1,2", "run --example tutorial/f --inputs nan,inf,-inf,1e999",
    "residuals --example tutorial/f4 --policy save_only_these_names",
    "residuals --example tutorial/f4 --policy save_only_these_names --names nope",
    "residuals --example tutorial/f --policy bogus", "memory --example tutorial/f --budgets 1B,2B,,3B",
    "memory --example tutorial/loss --budgets 100B,500B", "bench --example tutorial/f -r 0",
    "bench --example tutorial/f -r 99999999999", "lower --example tutorial/f --emit asm",
    "lower --example tutorial/f --target cuda --emit llvm", "examples --plugin /nonexistent.so",
    "jaxpr --example", "jaxpr --example no/such", "jaxpr /nonexistent", "jaxpr /", "nosuch",
    "", "--bogus", "jaxpr --color sometimes --example tutorial/f",
    "fwd-bwd --example tutorial/f --layout diagonal", "grad --example tutorial/f --arg-names a,b",
    "run --example tutorial/f --out /proc/forbidden", "run --example tutorial/f --inputs x.npy,1,1,1",
]


def classify(args, proc_rc, out, err, timed_out):
    if timed_out:
        return "hang"
    if proc_rc < 0:
        return "crash"
    if proc_rc == 3 or "internal error" in err:
        return "internal"
    if proc_rc not in (0, 1, 2):
        return "bad-exit"
    if proc_rc in (1, 2):
        lines = [l for l in err.splitlines() if l.strip()]
        if len(lines) != 1 or not lines[0].startswith("cjax: ") or out:
            return "bad-message"
    return "ok"


def run_one(cli, args, stdin, timeout, env):
    cmd = [cli] + args
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), False
    except subprocess.TimeoutExpired:
        return 0, "", "", True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/tools/cjax"))
    ap.add_argument("--plugins", default=os.path.join(ROOT, "build/tests/cli/plugin"))
    ap.add_argument("--mutants", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="cjax-adversarial-")
    env = dict(os.environ)
    # Programs of several GiB would run (and two at once could exhaust this machine): cap them,
    # which exercises the refusal too.
    env.setdefault("CJAX_MEMORY_LIMIT", "4GiB")
    cases = []  # (args list, stdin bytes)
    for name, text in fixed_inputs():
        path = os.path.join(work, name)
        with open(path, "w", encoding="latin-1") as f:
            f.write(text)
        for c in COMMANDS:
            cases.append((c.format(f=path).split(), b""))
    sources = corpus()
    for k in range(a.mutants):
        src = rng.choice(sources)
        with open(src, encoding="latin-1") as f:
            text = f.read()
        for _ in range(rng.randrange(1, 4)):
            text = mutate(text, rng)
        path = os.path.join(work, f"mutant_{k}" + os.path.splitext(src)[1])
        with open(path, "w", encoding="latin-1") as f:
            f.write(text)
        cases.append((rng.choice(COMMANDS).format(f=path).split(), b""))
    for o in OPTIONS:
        cases.append(([t if t != "''" else "" for t in o.split()], b""))
    npy = os.path.join(ROOT, "fuzz/seeds/fuzz_npy_reader")
    for n in sorted(os.listdir(npy)) if os.path.isdir(npy) else []:
        cases.append((["run", "--example", "tutorial/sin_sin", "--inputs", os.path.join(npy, n)], b""))
    if os.path.isdir(a.plugins):
        for n in sorted(os.listdir(a.plugins)):
            if n.endswith(".so"):
                p = os.path.join(a.plugins, n)
                for c in (["examples", "--plugin", p], ["jaxpr", "--plugin", p, "--function", "f"],
                          ["grad", "--plugin", p, "--function", "loss"]):
                    cases.append((c, b""))
    counts, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = {pool.submit(run_one, a.cli, args, stdin, a.timeout, env): args
                   for args, stdin in cases}
        for fut in concurrent.futures.as_completed(futures):
            args = futures[fut]
            rc, out, err, timed_out = fut.result()
            kind = classify(args, rc, out, err, timed_out)
            counts[kind] = counts.get(kind, 0) + 1
            if kind != "ok":
                failures.append((kind, rc, " ".join(args)[:300], err.strip()[:300]))
    print(f"adversarial: {len(cases)} invocations; " +
          ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    for kind, rc, cmd, err in sorted(failures):
        print(f"  {kind} (exit {rc}): cjax {cmd}\n      {err}")
    print(f"inputs kept in {work}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
