#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's test suite and report each case as a TAP test point.

  rdma_core_tap.py SUITE_DIR TAP_FILE [run_tests.py options...]

SUITE_DIR is a decompressed copy of /usr/share/doc/rdma-core/tests. The
suite's own output goes to stdout and stderr as usual; the test points
(skips with rdma-core's reason, failures and errors with their traceback
as diagnostics) go to TAP_FILE as each case ends. Exit status: 0 when no
case failed or erred.
"""

import os
import sys
import unittest
from importlib.machinery import SourceFileLoader


class TapResult(unittest.TextTestResult):
    tap = None
    n = 0

    def _point(self, ok, test, extra=""):
        TapResult.n += 1
        name = test.id()
        if name.startswith("tests."):
            name = name[len("tests."):]
        line = "%s %d - %s%s\n" % ("ok" if ok else "not ok", TapResult.n,
                                   name, extra)
        TapResult.tap.write(line)
        TapResult.tap.flush()

    def _diag(self, test, err):
        text = self._exc_info_to_string(err, test)
        for line in text.rstrip("\n").split("\n")[-12:]:
            TapResult.tap.write("#   %s\n" % line)
        TapResult.tap.flush()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._point(True, test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._point(True, test, " # SKIP " + " ".join(str(reason).split()))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._point(True, test, " (expected failure)")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._point(False, test, " (unexpected success)")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._point(False, test)
        self._diag(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._point(False, test)
        self._diag(test, err)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    suite_dir, tap_path = sys.argv[1], sys.argv[2]
    sys.path.insert(0, suite_dir)
    sys.argv = [os.path.join(suite_dir, "run_tests.py")] + sys.argv[3:]
    from args_parser import parser
    tests = SourceFileLoader("tests", os.path.join(suite_dir, "__init__.py")).load_module()
    parser.parse_args()
    with open(tap_path, "w") as tap:
        TapResult.tap = tap
        runner = unittest.TextTestRunner(verbosity=2, resultclass=TapResult)
        prog = unittest.main(module=tests, testRunner=runner, exit=False)
        tap.write("1..%d\n" % TapResult.n)
    res = prog.result
    print("%d run, %d failures, %d errors, %d skipped" %
          (res.testsRun, len(res.failures), len(res.errors),
           len(res.skipped)))
    sys.exit(0 if res.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
