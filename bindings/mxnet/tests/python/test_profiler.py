"""mx.profiler on weft's profiler: a Chrome trace file with the ops run, aggregate statistics, and
the frontend's own tasks and markers in the same trace."""
import json


def test_trace_file_and_statistics(mx, tmp_path):
    path = tmp_path / 'profile.json'
    mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename=str(path))
    mx.profiler.set_state('run')
    a = mx.nd.ones((64, 64))
    (a + a).wait_to_read()
    domain = mx.profiler.Domain('weft_test')
    task = mx.profiler.Task(domain, 'my_task')
    task.start()
    (a * 2).wait_to_read()
    task.stop()
    mx.profiler.Marker(domain, 'my_marker').mark()
    mx.profiler.set_state('stop')
    stats = mx.profiler.dumps(reset=False)
    mx.profiler.dump()
    events = json.loads(path.read_text())['traceEvents']
    names = {e.get('name') for e in events}
    assert 'broadcast_add' in names and '_mul_scalar' in names, sorted(n for n in names if n)[:40]
    assert any(e.get('name') == 'my_task' and e.get('cat') == 'weft_test' for e in events)
    assert 'my_marker' in names
    assert 'Profile Statistics' in stats and 'broadcast_add' in stats
    parsed = json.loads(mx.profiler.dumps(reset=True, format='json'))
    assert parsed['Unit']['Time'] == 'ms'
