"""What the hostile compiler tests share: one case per run, chosen on the command line, with its
own work directory, and checks that print "ok" or "FAILED" and are counted."""
import argparse
import os


class CaseRunner:
    def __init__(self, args):
        self.args = args
        self.failures = []

    def path(self, name):
        return os.path.join(self.args.work_dir, name)

    def write(self, name, text):
        p = self.path(name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def check(self, ok, what, output=""):
        print(("ok     " if ok else "FAILED ") + what, flush=True)
        if not ok:
            self.failures.append(what)
            if output:
                print("  output: " + output[-3000:], flush=True)


def run_case(doc, cases, runner_class, required_options, work_prefix=""):
    """Parses `<case> --option X ... --work-dir D`, runs the case with a fresh runner in
    D/<work_prefix><case>, and returns the exit status (1 when a check failed)."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("case", choices=sorted(cases))
    for option in required_options:
        parser.add_argument(option, required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    args.work_dir = os.path.join(args.work_dir, work_prefix + args.case)
    os.makedirs(args.work_dir, exist_ok=True)
    r = runner_class(args)
    cases[args.case](r)
    if r.failures:
        print("%d check(s) failed" % len(r.failures))
        return 1
    return 0
