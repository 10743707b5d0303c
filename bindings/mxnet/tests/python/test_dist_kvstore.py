"""Distributed KVStores through MXNet's frontend: two worker processes started by weft-launch (and
a parameter server for dist_async) train with kv.set_optimizer, as MXNet programs do."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize('kind,servers', [('dist_sync', 0), ('dist_async', 1)])
def test_two_workers(kind, servers):
    launch = os.environ.get('WEFT_LAUNCH')
    if not launch:
        pytest.skip('WEFT_LAUNCH (the weft-launch tool) is not set; ctest sets it')
    cmd = [launch, '-n', '2', '-s', str(servers), '--timeout', '240', '--', sys.executable,
           os.path.join(HERE, 'dist_worker.py'), kind]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in (0, 1):
        assert 'worker %d of 2: %s ok' % (rank, kind) in r.stdout, r.stdout + r.stderr
