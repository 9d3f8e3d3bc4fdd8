# Helpers the device scripts share (source it after setting OUT): the bundle unpacked once
# into $B, `log` into $OUT/summary.txt, `bench` (one `infer-run bench`, its JSON line tagged
# with its name into $OUT/bench.jsonl) and `pack` ($OUT as one all.tgz: the run tool brings
# back only a few files). LIMIT: the second of the call's clock by which a bench must end.
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
B=/tmp/b/infer-bundle
[ -x $B/bin/infer-run ] || { mkdir -p /tmp/b && tar xJf .bundle/infer-bundle.tar.xz -C /tmp/b; }
sum=$OUT/summary.txt
: > $sum
: > $OUT/bench.jsonl
LIMIT=${LIMIT:-585}
log() { echo "$*" | tee -a $sum; }
bench() { # NAME ARTIFACT ARGS...
  local name=$1 artifact=$2; shift 2
  timeout $(( LIMIT - SECONDS )) $B/bin/infer-run $artifact bench --device cuda "$@" > $OUT/$name.log 2>&1 \
    || { log "$name failed ($SECONDS s)"; tail -3 $OUT/$name.log | tee -a $sum; return; }
  log "$name: $(grep -v '^{' $OUT/$name.log | tail -2 | tr '\n' ' ')"
  tail -1 $OUT/$name.log | python3 -c "import json,sys; d=json.load(sys.stdin); d['name']='$name'; print(json.dumps(d))" >> $OUT/bench.jsonl
}
pack() { (cd $OUT && tar czf /tmp/all.tgz * && rm -rf * && mv /tmp/all.tgz all.tgz); }
