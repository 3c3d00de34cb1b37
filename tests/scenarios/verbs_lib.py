# SPDX-License-Identifier: GPL-2.0
"""What the scenario tools (srq_verbs.py, flush_verbs.py, odp_verbs.py,
scale_mr.py, faults_rnr.py) share beyond rdma-core's own test classes:
TAP output, the command line, payload patterns, and the importer of
rdma-core's test package.

Importing this module makes rdma-core's Python test suite importable as
the package `tests` (tests.base, tests.utils, tests.test_odp...), from a
private decompressed copy of /usr/share/doc/rdma-core/tests (Debian
gzips some of its files), as the rdma_core_suite scenario does. The
package's __init__.py, which loads every test module for unittest, is
left out. Without the suite the tool bails out (TAP "Bail out!").
"""

import argparse
import atexit
import gzip
import os
import shutil
import sys
import tempfile
import types

SUITE = "/usr/share/doc/rdma-core/tests"
# A completion rdma-core's poll helpers wait for, in seconds: room for a
# slow guest (its own default is 10).
POLL_LIMIT = 30


def bail(why):
    """Stop the tool with a TAP bail-out."""
    print("Bail out! " + why)
    sys.stdout.flush()
    sys.exit(2)


def _import_rdma_core_tests(suite=SUITE):
    if not os.path.isfile(os.path.join(suite, "base.py.gz")) and \
            not os.path.isfile(os.path.join(suite, "base.py")):
        bail("rdma-core's test suite is missing (%s: install "
             "python3-pyverbs)" % suite)
    top = tempfile.mkdtemp(prefix="sroce-rdma-core-tests.")
    atexit.register(shutil.rmtree, top, True)
    pkg = os.path.join(top, "tests")
    os.mkdir(pkg)
    try:
        for name in os.listdir(suite):
            src = os.path.join(suite, name)
            if not os.path.isfile(src):
                continue
            if name.endswith(".gz"):
                with gzip.open(src) as fin, \
                        open(os.path.join(pkg, name[:-3]), "wb") as fout:
                    shutil.copyfileobj(fin, fout)
            else:
                shutil.copy(src, pkg)
    except OSError as exc:
        bail("cannot copy rdma-core's test suite: %s" % exc)
    # base.py imports args_parser as a top-level module.
    sys.path.append(pkg)
    # The package without its __init__.py: that one imports every test
    # module, which the tools do not need.
    mod = types.ModuleType("tests")
    mod.__path__ = [pkg]
    mod.__file__ = os.path.join(pkg, "__init__.py")
    sys.modules["tests"] = mod
    try:
        import tests.base  # noqa: F401 pylint: disable=import-outside-toplevel
        import tests.utils  # pylint: disable=import-outside-toplevel
    except Exception as exc:  # pylint: disable=broad-except
        bail("cannot import rdma-core's test classes: %s: %s" %
             (type(exc).__name__, exc))
    tests.utils.POLL_CQ_TIMEOUT = POLL_LIMIT


_import_rdma_core_tests()


def tool_args(doc, more=()):
    """The command line of a tool on one device: -d DEV -g GIDX, then the
    (flags, keyword arguments) pairs of more; doc's first paragraph is the
    description."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("-d", "--dev", required=True)
    ap.add_argument("-g", "--gid-index", type=int, required=True)
    for flags, kwargs in more:
        ap.add_argument(*flags, **kwargs)
    return ap.parse_args()


_counts = {"pass": 0, "fail": 0}


def tap(ok, what, why=None):
    """Report one TAP test point; why explains a failure. Returns ok."""
    n = _counts["pass"] + _counts["fail"] + 1
    _counts["pass" if ok else "fail"] += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    if not ok and why:
        print("#   " + str(why))
    sys.stdout.flush()
    return ok


def tap_done():
    """Print the plan and the summary; return the exit status."""
    print("1..%d" % (_counts["pass"] + _counts["fail"]))
    print("# %d passed, %d failed" % (_counts["pass"], _counts["fail"]))
    return 1 if _counts["fail"] else 0


def pattern(seed, size):
    """size bytes that differ with seed, with the offset, and from one 4 KiB
    page to the next, so that a byte or a page out of place shows (rdma-core's
    validate() checks a message of one repeated letter)."""
    return bytes((seed * 131 + i * 7 + (i >> 8) + (i >> 12) * 29) & 0xff
                 for i in range(size))


def differs(got, want):
    """None when got is want, else where the first byte differs."""
    if got == want:
        return None
    if len(got) != len(want):
        return "%d bytes, expected %d" % (len(got), len(want))
    return "payload differs from offset %d" % next(
        i for i in range(len(want)) if got[i] != want[i])


def poll_wc(cq):
    """The next completion on cq, whatever its status, through rdma-core's
    poller; None when none comes within POLL_LIMIT seconds."""
    import tests.utils as u  # pylint: disable=import-outside-toplevel
    from pyverbs.pyverbs_error import PyverbsError  # pylint: disable=C0415
    try:
        return u._poll_cq(cq)[0]  # pylint: disable=protected-access
    except PyverbsError:
        return None
