"""One worker of test_dist_kvstore.py's jobs (started by weft-launch): a distributed KVStore used
through MXNet's frontend, with the optimizer set by kv.set_optimizer (sent pickled to the store)."""
import sys

import numpy as np
import mxnet as mx

kind = sys.argv[1]
kv = mx.kv.create(kind)
rank, n = kv.rank, kv.num_workers
assert n == 2, n
shape = (2, 3)
kv.init('3', mx.nd.ones(shape))
kv.init('w', mx.nd.zeros(shape))
kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1.0))
# Each worker pushes (rank + 1): the servers (or every worker) apply SGD to the sum, 1 + 2 = 3.
kv.push('3', mx.nd.ones(shape) * (rank + 1))
out = mx.nd.zeros(shape)
kv.pull('3', out=out)
expected = 1 - 0.1 * 3
if kind == 'dist_async':  # each push is applied as it arrives: both have landed after a barrier
    kv._barrier()
    kv.pull('3', out=out)
np.testing.assert_allclose(out.asnumpy(), np.full(shape, expected), rtol=1e-6)
kv.push('w', mx.nd.ones(shape))
kv._barrier()
kv.pull('w', out=out)
np.testing.assert_allclose(out.asnumpy(), np.full(shape, -0.1 * 2), rtol=1e-6)
print('worker %d of %d: %s ok' % (rank, n, kind))
