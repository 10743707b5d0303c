"""mx.io and mx.recordio from MXNet's frontend on weft: the iterators come from weft's registry
(weft/io.h), RecordIO files from weft/recordio.h. ImageRecordIter is compared batch by batch with
what MXNet 1.9.1's own ImageRecordIter produced from the same .rec file (tests/io/gen_fixtures.py
wrote both)."""
import os

import numpy as np
import pytest

IO_DATA = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'tests', 'io', 'data')
FMNIST = '/usr/share/datasets/fashion-mnist'


def test_recordio_round_trip_and_index(mx, tmp_path):
    rec, idx = str(tmp_path / 'a.rec'), str(tmp_path / 'a.idx')
    records = [b'', b'x', b'abc' * 1000, bytes(range(256)) * 3]
    w = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for i, r in enumerate(records):
        w.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), r))
    w.close()
    r = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    for i in reversed(range(len(records))):  # random access through the index
        header, payload = mx.recordio.unpack(r.read_idx(i))
        assert payload == records[i] and header.label == float(i) and header.id == i
    r.close()
    seq = mx.recordio.MXRecordIO(rec, 'r')
    got = []
    while True:
        item = seq.read()
        if item is None:
            break
        got.append(mx.recordio.unpack(item)[1])
    assert got == records


def test_recordio_reader_refuses_a_missing_file(mx, tmp_path):
    with pytest.raises(mx.base.MXNetError, match='nope.rec'):
        mx.recordio.MXRecordIO(str(tmp_path / 'nope.rec'), 'r')


def test_csv_iter_batches_the_rows(mx, tmp_path):
    data = np.arange(30, dtype=np.float32).reshape(10, 3)
    labels = np.arange(10, dtype=np.float32)
    np.savetxt(tmp_path / 'd.csv', data, delimiter=',')
    np.savetxt(tmp_path / 'l.csv', labels, delimiter=',')
    it = mx.io.CSVIter(data_csv=str(tmp_path / 'd.csv'), data_shape=(3,), label_csv=str(tmp_path / 'l.csv'),
                       batch_size=4, round_batch=False)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 2]
    got = np.concatenate([b.data[0].asnumpy()[:4 - b.pad] for b in batches])
    np.testing.assert_array_equal(got, data)
    np.testing.assert_array_equal(np.concatenate([b.label[0].asnumpy()[:4 - b.pad] for b in batches]), labels)


def test_mnist_iter_reads_the_idx_files(mx):
    image = os.path.join(FMNIST, 't10k-images-idx3-ubyte.gz')
    if not os.path.exists(image):
        pytest.skip('Fashion-MNIST (dataset-fashion-mnist) is not installed')
    it = mx.io.MNISTIter(image=image, label=os.path.join(FMNIST, 't10k-labels-idx1-ubyte.gz'), batch_size=100,
                         shuffle=False, flat=True)
    b = next(iter(it))
    assert b.data[0].shape == (100, 784)
    import gzip
    with gzip.open(image) as f:
        raw = np.frombuffer(f.read(), dtype=np.uint8, offset=16)[:784 * 100].reshape(100, 784)
    np.testing.assert_allclose(b.data[0].asnumpy(), raw / 255.0, rtol=0, atol=1e-7)


@pytest.mark.parametrize('name,kw', [
    ('jpg_u8', dict(path_imgrec='jpg.rec', data_shape=(3, 30, 28), batch_size=4, dtype='uint8')),
    ('png_u8', dict(path_imgrec='png.rec', data_shape=(3, 28, 30), batch_size=4, dtype='uint8')),
])
def test_image_record_iter_matches_mxnet(mx, name, kw):
    kw = dict(kw, preprocess_threads=1, verbose=False)
    kw['path_imgrec'] = os.path.join(IO_DATA, kw['path_imgrec'])
    expected = mx.nd.load(os.path.join(IO_DATA, 'iter_%s.params' % name))
    it = mx.io.ImageRecordIter(**kw)
    n = 0
    for n, b in enumerate(it):
        key = '0:%d' % n
        np.testing.assert_array_equal(b.data[0].asnumpy(), expected['data:' + key].asnumpy())
        np.testing.assert_array_equal(b.label[0].asnumpy(), expected['label:' + key].asnumpy())
        assert b.pad == int(expected['pad:' + key].asscalar())
    assert n + 1 == sum(1 for k in expected if k.startswith('data:0:'))


def test_libsvm_iter_gives_mxnets_csr_batches(mx, tmp_path):
    # MXNet's documented example (LibSVMIter's docstring, test_io.py's synthetic check): batches,
    # labels and pads are the ones libmxnet 1.9.1 gives for this file.
    (tmp_path / 'data.t').write_text('1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n')
    (tmp_path / 'label.t').write_text('1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n')
    it = mx.io.LibSVMIter(data_libsvm=str(tmp_path / 'data.t'), data_shape=(3,), batch_size=3)
    batches = list(it)
    assert [b.data[0].stype for b in batches] == ['csr', 'csr']
    for b in batches:
        b.data[0].check_format(True)
    np.testing.assert_allclose(batches[0].data[0].asnumpy(), [[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2]], rtol=1e-6)
    np.testing.assert_allclose(batches[1].data[0].asnumpy(), [[0, 0, -1.2], [0.5, 0, 1.2], [0, 0, 0]], rtol=1e-6)
    assert [b.label[0].asnumpy().tolist() for b in batches] == [[1, -2, -3], [4, 1, -2]]
    assert [b.pad for b in batches] == [0, 2]
    it.reset()  # the next epoch goes on after the two examples the wrapped batch took
    assert [b.label[0].asnumpy().tolist() for b in it] == [[-3, 4, 1]]
    it = mx.io.LibSVMIter(data_libsvm=str(tmp_path / 'data.t'), data_shape=(3,), label_libsvm=str(tmp_path / 'label.t'),
                          label_shape=(3,), batch_size=3)
    label = next(iter(it)).label[0]
    assert label.stype == 'csr'
    np.testing.assert_allclose(label.asnumpy(), [[0, 0, 0], [0.125, 0, 0], [0, 0, 1.2]], rtol=1e-6)


def test_libsvm_iter_refuses_a_negative_index(mx, tmp_path):
    (tmp_path / 'data.t').write_text('1.0 0:0.5 2:1.2\n-3.0 -1:0.6 1:2.4\n')
    with pytest.raises(mx.base.MXNetError, match="line 2 token '-1:0.6'"):
        # (MXDataIter's constructor already reads the first batch, as MXNet's does)
        for batch in mx.io.LibSVMIter(data_libsvm=str(tmp_path / 'data.t'), data_shape=(3,), batch_size=2):
            batch.data[0].asnumpy()


def test_iterators_weft_lacks_say_what_it_has(mx):
    with pytest.raises(mx.base.MXNetError, match='ImageDetRecordIter is not available in weft.*LibSVMIter'):
        mx.io.ImageDetRecordIter(path_imgrec='x.rec', data_shape=(3, 8, 8), batch_size=2)
