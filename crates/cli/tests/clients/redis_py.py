"""redis-py at its defaults against `cosine serve` (CI runs it; see .ci/run).

redis-py 8 opens each connection with HELLO 3 (RESP3) unless told protocol=2, and its pipelines are
transactions (MULTI ... EXEC) unless told otherwise: this checks that such a client round-trips strings, hashes,
sorted sets, pipelines of both kinds and errors, and that a RESP2 client still works.

    python redis_py.py PORT
"""
import sys

import redis

port = int(sys.argv[1])
for protocol in (None, 2):
    kwargs = {} if protocol is None else {"protocol": protocol}
    r = redis.Redis(port=port, **kwargs)
    tag = f"protocol={protocol or 'default'}"
    assert r.ping(), tag
    assert r.set(f"py:{tag}", "value") is True, tag
    assert r.get(f"py:{tag}") == b"value", tag
    assert r.get("py:missing") is None, tag
    r.hset(f"py:h:{tag}", mapping={"f1": "a", "f2": "b"})
    assert r.hgetall(f"py:h:{tag}") == {b"f1": b"a", b"f2": b"b"}, (tag, r.hgetall(f"py:h:{tag}"))
    r.zadd(f"py:z:{tag}", {"m1": 1.5, "m2": 2})
    got = r.zrangebyscore(f"py:z:{tag}", "-inf", "+inf", withscores=True)
    assert [(m, float(s)) for m, s in got] == [(b"m1", 1.5), (b"m2", 2.0)], (tag, got)
    for transaction in (True, False):  # redis-py's default pipeline is a transaction (MULTI ... EXEC)
        pipe = r.pipeline(transaction=transaction)
        pipe.set(f"py:p:{tag}", "1").incr(f"py:p:{tag}").get(f"py:p:{tag}")
        assert pipe.execute() == [True, 2, b"2"], (tag, transaction)
    try:
        r.incr(f"py:h:{tag}")
        raise AssertionError(f"{tag}: INCR on a hash must fail")
    except redis.ResponseError:
        pass
    assert r.ping(), tag
    print(f"redis-py {redis.__version__} ({tag}): strings, hashes, sorted sets, pipelines and transactions, errors ok")
