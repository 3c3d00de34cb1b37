# SPDX-License-Identifier: GPL-2.0
"""What the scenario tools (srq_verbs.py, flush_verbs.py, odp_verbs.py,
scale_mr.py, faults_rnr.py) share beyond rdma-core's own test classes:
the command line, the importer of rdma-core's test package, and (from
tap_lib.py) TAP output and payload patterns.

Importing this module makes rdma-core's Python test suite importable as
the package `tests` (tests.base, tests.utils, tests.test_odp...), from a
decompressed copy of /usr/share/doc/rdma-core/tests (Debian gzips some
of its files) that the tools of one guest boot share. The
package's __init__.py, which loads every test module for unittest, is
left out. Without the suite the tool bails out (TAP "Bail out!").
"""

import argparse
import atexit
import gzip
import os
import shutil
import stat
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


def _copy_suite(suite, pkg):
    """Decompress rdma-core's test suite into the new directory pkg."""
    os.mkdir(pkg)
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


def _suite_copy(suite):
    """The directory of a decompressed copy of the suite. One copy serves
    every tool of a guest boot, so that Python compiles the suite's large
    modules once rather than on every run (seconds each on a TCG guest):
    it is made under a private name, then renamed into place; a copy that
    is not this user's own directory is never used."""
    cache = os.path.join(tempfile.gettempdir(),
                         "sroce-rdma-core-tests.%d" % os.getuid())
    pkg = os.path.join(cache, "tests")
    try:
        st = os.lstat(cache)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and \
                not st.st_mode & 0o022 and os.path.isdir(pkg):
            return pkg
    except FileNotFoundError:
        pass
    top = tempfile.mkdtemp(prefix="sroce-rdma-core-tests.")
    try:
        _copy_suite(suite, os.path.join(top, "tests"))
    except OSError as exc:
        shutil.rmtree(top, True)
        bail("cannot copy rdma-core's test suite: %s" % exc)
    try:
        os.rename(top, cache)
        return pkg
    except OSError:
        # Another tool made it first, or a stranger's file is in the
        # way: this run keeps its private copy.
        atexit.register(shutil.rmtree, top, True)
        return os.path.join(top, "tests")


def _import_rdma_core_tests(suite=SUITE):
    if not os.path.isfile(os.path.join(suite, "base.py.gz")) and \
            not os.path.isfile(os.path.join(suite, "base.py")):
        bail("rdma-core's test suite is missing (%s: install "
             "python3-pyverbs)" % suite)
    pkg = _suite_copy(suite)
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


from tap_lib import differs, pattern, tap, tap_done  # noqa: F401 pylint: disable=unused-import


def poll_wc(cq):
    """The next completion on cq, whatever its status, through rdma-core's
    poller; None when none comes within POLL_LIMIT seconds."""
    import tests.utils as u  # pylint: disable=import-outside-toplevel
    from pyverbs.pyverbs_error import PyverbsError  # pylint: disable=C0415
    try:
        return u._poll_cq(cq)[0]  # pylint: disable=protected-access
    except PyverbsError:
        return None
