"""pytest setup for the MXNet binding's tests: MXNet's unmodified Python package (mxnet==1.9.1)
driven on weft's libweft_mxnet.

Every test runs in a process whose MXNET_LIBRARY_PATH names libweft_mxnet.so; the session refuses
to start when mxnet would load its own bundled libmxnet.so instead (a test must never pass on the
real MXNet by accident)."""
import os

import pytest


def _loaded_libraries():
    with open('/proc/self/maps') as maps:
        return {line.split()[-1] for line in maps if line.rstrip().endswith('.so') or '.so.' in line}


def pytest_configure(config):
    lib = os.environ.get('MXNET_LIBRARY_PATH', '')
    if not lib.endswith('libweft_mxnet.so') or not os.path.isfile(lib):
        raise pytest.UsageError(
            'MXNET_LIBRARY_PATH must name weft\'s libweft_mxnet.so (export MXNET_LIBRARY_PATH=$(weft-config '
            '--mxnet-library)); it is %r' % lib)
    import mxnet
    assert mxnet.base._LIB._name == lib, 'mxnet loaded %s, not %s' % (mxnet.base._LIB._name, lib)
    bundled = [p for p in _loaded_libraries() if os.path.basename(p) == 'libmxnet.so']
    assert not bundled, 'the real libmxnet is loaded: %s' % bundled


@pytest.fixture(scope='session')
def mx():
    import mxnet
    return mxnet


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under WEFT_REQUIRE_ALL=1 (scripts/test.sh) a skip is a failure: every capability these tests
    skip without (Fashion-MNIST, lavapipe, train_mnist, weft-launch) is one CI has, so a skip there
    would hide a test that did not run. WEFT_REQUIRE_ALL=0 on a machine that lacks one."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get('WEFT_REQUIRE_ALL') == '1' and not hasattr(report, 'wasxfail'):
        report.outcome = 'failed'
        report.longrepr = 'WEFT_REQUIRE_ALL=1 and this test skipped: %s' % (report.longrepr,)
