"""An operator that fails while it runs reports at the next wait, as MXNet's exception-handling
note describes: the call itself returns, the error travels down the dependency chain, and the
next synchronising call (wait_to_read, asnumpy, waitall) on a dependent array raises it, once."""
import numpy as np
import pytest

BAD_SCALE = "_random_normal.*'scale' = -1.*standard deviation must be positive"


def bad_normal(mx, shape=(2, 2)):
    # A negative standard deviation is only checked by the kernel, so the call returns.
    return mx.nd.random.normal(0, -1, shape)


def test_call_returns_and_the_wait_raises(mx):
    a = bad_normal(mx)
    with pytest.raises(mx.base.MXNetError, match=BAD_SCALE):
        a.wait_to_read()
    mx.nd.waitall()  # already reported


def test_error_travels_down_the_chain(mx):
    a = mx.nd.ones((2, 2))
    b = bad_normal(mx)
    c = mx.nd.dot(a, b)
    d = (c + 1).copyto(mx.cpu())
    with pytest.raises(mx.base.MXNetError, match=BAD_SCALE):
        d.asnumpy()
    # The arrays that did not depend on the failure are intact.
    np.testing.assert_array_equal(a.asnumpy(), np.ones((2, 2)))


def test_one_failure_is_raised_once(mx):
    b = bad_normal(mx, (2, 3))
    first, second = b  # two views of the failed output
    other = b * 2  # and an array computed from it
    with pytest.raises(mx.base.MXNetError, match=BAD_SCALE):
        first.asnumpy()
    second.asnumpy()
    other.wait_to_read()
    mx.nd.waitall()


def test_waitall_raises_once_and_clears(mx):
    a = bad_normal(mx).copyto(mx.cpu())
    with pytest.raises(mx.base.MXNetError, match=BAD_SCALE):
        mx.nd.waitall()
    mx.nd.waitall()
    a.wait_to_read()  # cleared by the waitall that raised it


def test_every_new_failure_is_reported(mx):
    for _ in range(3):
        a = bad_normal(mx)
        with pytest.raises(mx.base.MXNetError, match=BAD_SCALE):
            mx.nd.dot(a, a).asnumpy()
    for _ in range(2):
        bad_normal(mx).copyto(mx.cpu())
        with pytest.raises(mx.base.MXNetError, match=BAD_SCALE):
            mx.nd.waitall()


def test_same_op_runs_again_after_a_failure(mx):
    a = bad_normal(mx)
    a = mx.nd.dot(a, a)
    with pytest.raises(mx.base.MXNetError, match=BAD_SCALE):
        a.asnumpy()
    good = mx.nd.random.normal(0, 1, (2, 2))
    assert np.isfinite(good.asnumpy()).all()
    assert good.asnumpy().std() > 0


def test_failure_inside_a_symbolic_graph(mx):
    x = mx.sym.var('x')
    y = mx.sym.dot(x, mx.sym.random.normal(0, -1, (2, 2)))
    ex = y.bind(mx.cpu(), {'x': mx.nd.ones((2, 2))})
    out = ex.forward()[0]
    with pytest.raises(mx.base.MXNetError, match="'scale' = -1"):
        out.asnumpy()
    np.testing.assert_array_equal(ex.arg_dict['x'].asnumpy(), np.ones((2, 2)))


def test_samplers_after_a_failed_one_carry_its_failure(mx):
    # The samplers share the generator (MXNet's random resource): the ones pushed after a failed
    # sampler carry its failure, which one wait reports for all of them.
    bad_normal(mx)  # never waited on
    later = mx.nd.random.uniform(shape=(3,))
    with pytest.raises(mx.base.MXNetError, match=BAD_SCALE):
        later.asnumpy()
    mx.nd.waitall()  # nothing left to report
    assert mx.nd.random.uniform(shape=(3,)).asnumpy().shape == (3,)
