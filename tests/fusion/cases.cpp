// Cases 1-8: groups whose launches the fusion setting decides, every output checked. Every type runs with
// sum; some with avg and max too (and all five ops in the mixed-key case).
#include "fusion_test.h"

namespace fusiontest {

namespace {

constexpr Layout kLayouts[] = {Layout::kSeparate, Layout::kContiguous};
// Types that also run avg and max (every type runs sum).
const std::vector<weftDataType_t> kAvgMaxTypes = {weftFloat16, weftBfloat16, weftFloat32, weftInt8, weftUint64};
const std::vector<weftDataType_t> kAvgMaxTypesLarge = {weftBfloat16, weftInt32};

OpSpec allReduce(const TypeOp& t, size_t count, bool inPlace, Call call = Call::kPlain, int fusionId = 1) {
  OpSpec op;
  op.type = t.type;
  op.op = t.op;
  op.count = count;
  op.inPlace = inPlace;
  op.call = call;
  op.fusionId = fusionId;
  return op;
}

OpSpec withColl(OpSpec op, weftCollType_t coll) {
  op.coll = coll;
  return op;
}

// n ops, op i made by make(i).
template <typename Make>
std::vector<OpSpec> generate(int n, Make make) {
  std::vector<OpSpec> ops;
  ops.reserve(n);
  for (int i = 0; i < n; ++i) ops.push_back(make(i));
  return ops;
}

// The same ops all in place, then all out of place: carved back to back, their buffers lie end to end.
std::vector<OpSpec> allPlaced(std::vector<OpSpec> ops, bool inPlace) {
  for (OpSpec& op : ops) op.inPlace = inPlace;
  return ops;
}

// A layout per (type, op) combination, alternating, where running both would take too long.
Layout alternate(size_t k) { return k % 2 ? Layout::kContiguous : Layout::kSeparate; }

Settings allAuto() { return Settings{}; }

}  // namespace

// 1. Index mode [20,35]: 40 AllReduces run as ops 0-19, 20-34 and 35-39.
void caseIndex(Context& ctx) {
  Settings s = allAuto();
  s.allReduce = {weftFusionIndex, 0, {20, 35}};
  applyAll(ctx.view.comm, s);
  for (const TypeOp& t : typeOps(kAvgMaxTypes)) {
    std::vector<OpSpec> ops;
    for (int i = 0; i < 40; ++i) {
      const Call call = i % 4 == 3 ? Call::kExNull : i % 4 == 2 ? Call::kExAttr : Call::kPlain;
      ops.push_back(allReduce(t, 1 + (i * 37) % 300, i % 3 == 1, call));
    }
    for (Layout l : kLayouts) runModeled(ctx, "index [20,35] " + typeOpName(t), ops, l, s, 3);
    ops.resize(30);  // the last split point not reached
    runModeled(ctx, "index [20,35] 30 ops " + typeOpName(t), ops, Layout::kSeparate, s, 2);
  }
  // No split point: one launch; a split point at 0 changes nothing.
  const TypeOp f32{weftFloat32, weftSum};
  const std::vector<OpSpec> forty = generate(40, [&](int i) { return allReduce(f32, 1 + i, i % 2); });
  Settings none = s;
  none.allReduce.splits.clear();
  applyAll(ctx.view.comm, none);
  runModeled(ctx, "index [] 40 AllReduces", forty, Layout::kSeparate, none, 1);
  Settings zero = s;
  zero.allReduce.splits = {0, 20, 35};
  applyAll(ctx.view.comm, zero);
  runModeled(ctx, "index [0,20,35] 40 AllReduces", forty, Layout::kContiguous, zero, 3);
  applyAll(ctx.view.comm, s);
  // Two types alternating and two calls with fusion id 0, which still count as positions: per segment one
  // launch per type, and the id-0 calls alone.
  for (const TypeOp& t : typeOps({})) {
    const TypeOp other{t.type == weftFloat64 ? weftInt8 : weftFloat64, weftSum};
    std::vector<OpSpec> ops = generate(40, [&](int i) { return allReduce(i % 2 ? other : t, 3 + i, i % 3 == 0); });
    ops[5].call = ops[25].call = Call::kExAttr;
    ops[5].fusionId = ops[25].fusionId = 0;
    runModeled(ctx, "index [20,35] two types, ids 0 at 5 and 25 " + typeOpName(t), ops, Layout::kContiguous, s, 8);
  }
}

// 2. Size mode, 1 MiB: ten AllReduces of 256 KiB run as 4 + 4 + 2; one larger than the threshold alone.
void caseSize(Context& ctx) {
  Settings s = allAuto();
  s.allReduce = {weftFusionSize, size_t{1} << 20, {}};
  applyAll(ctx.view.comm, s);
  const std::vector<TypeOp> combos = typeOps(kAvgMaxTypesLarge);
  for (size_t k = 0; k < combos.size(); ++k) {
    std::vector<OpSpec> ops =
        generate(10, [&](int i) { return allReduce(combos[k], countFor(256 << 10, combos[k].type), i % 2); });
    runModeled(ctx, "size 1 MiB 10 x 256 KiB " + typeOpName(combos[k]), ops, alternate(k), s, 3);
  }
  const TypeOp f32{weftFloat32, weftSum};
  const size_t kib = countFor(1 << 10, weftFloat32);
  const std::vector<OpSpec> big = {allReduce(f32, 256 * kib, false), allReduce(f32, 2048 * kib, true),
                                   allReduce(f32, 256 * kib, false), allReduce(f32, 256 * kib, true)};
  // The 2 MiB op goes alone and the bucket of the first stays open: {0, 2, 3}, {1}.
  for (Layout l : kLayouts) runModeled(ctx, "size 1 MiB, 2 MiB op in the middle", big, l, s, 2);
  for (const TypeOp& t : {f32, TypeOp{weftInt8, weftSum}, TypeOp{weftFloat16, weftAvg}}) {
    const std::vector<OpSpec> ops(10, allReduce(t, countFor(256 << 10, t.type), false));
    for (bool inPlace : {false, true}) {
      runModeled(
          ctx,
          std::string("size 1 MiB 10 x 256 KiB all ") + (inPlace ? "in place " : "out of place ") + typeOpName(t),
          allPlaced(ops, inPlace), Layout::kContiguous, s, 3);
    }
  }
  if (ctx.view.size <= 3) {  // the 64 MiB of auto, at a cost the smaller runs can afford
    applyAll(ctx.view.comm, allAuto());
    const size_t mib = countFor(1 << 20, weftFloat32);
    const std::vector<OpSpec> large = {allReduce(f32, 32 * mib, false), allReduce(f32, 32 * mib, false),
                                       allReduce(f32, 1, false)};
    runModeled(ctx, "auto 32 MiB + 32 MiB fill 64 MiB exactly", large, Layout::kSeparate, allAuto(), 2);
    applyAll(ctx.view.comm, s);
  }
  const std::vector<OpSpec> halves = {allReduce(f32, 512 * kib, false), allReduce(f32, 512 * kib, false),
                                      allReduce(f32, 1, false)};
  runModeled(ctx, "size 1 MiB, 512 KiB + 512 KiB fill it exactly", halves, Layout::kContiguous, s, 2);
}

// 3. Fusion ids 1,1,1,1,2,2,2,2,0,0,0,0 in auto mode: one launch per id, id 0 alone; then id mode.
void caseFusionIds(Context& ctx) {
  Settings s = allAuto();
  applyAll(ctx.view.comm, s);
  const int ids[12] = {1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0};
  for (const TypeOp& t : typeOps(kAvgMaxTypes)) {
    std::vector<OpSpec> ops =
        generate(12, [&](int i) { return allReduce(t, 1 + (i * 53) % 400, i % 2, Call::kExAttr, ids[i]); });
    // Id 1 three ways: the attribute, the plain call and the Ex call with attr NULL.
    ops[1].call = Call::kPlain;
    ops[2].call = Call::kExNull;
    for (Layout l : kLayouts) runModeled(ctx, "ids 1x4 2x4 0x4 " + typeOpName(t), ops, l, s, 6);
    std::vector<OpSpec> interleaved = generate(12, [&](int i) { return ops[(i % 3) * 4 + i / 3]; });
    runModeled(ctx, "ids 1,2,0 interleaved " + typeOpName(t), interleaved, Layout::kSeparate, s, 6);
  }
  Settings byId = allAuto();
  byId.allReduce.mode = weftFusionId;
  applyAll(ctx.view.comm, byId);
  for (const TypeOp& t : typeOps({weftFloat32})) {
    std::vector<OpSpec> ops =
        generate(16, [&](int i) { return allReduce(t, 100 + i, i % 2, Call::kExAttr, 3 + i % 2); });
    ops.push_back(allReduce(t, 7, false, Call::kExAttr, 0));
    ops.push_back(allReduce(t, 9, false, Call::kPlain));
    ops.push_back(allReduce(t, 5, true, Call::kExNull));
    ops.push_back(allReduce(t, 11, true, Call::kExAttr, 0));
    runModeled(ctx, "id mode ids 3,4 alternating, 0, 1 " + typeOpName(t), ops, Layout::kSeparate, byId, 5);
  }
}

// 4. Auto: 1000 AllReduces of 4 KiB run as one; first without any setting (the default is auto), then
// back to the default with config NULL, then set explicitly.
void caseAutoMany(Context& ctx) {
  const Settings s = allAuto();
  const TypeOp f32{weftFloat32, weftSum};
  std::vector<OpSpec> ops =
      generate(1000, [&](int i) { return allReduce(f32, countFor(4 << 10, weftFloat32), i % 2); });
  runModeled(ctx, "default setting 1000 x 4 KiB", ops, Layout::kSeparate, s, 1);
  colltest::expectOk(weftCommSetFusion(ctx.view.comm, weftCollAllReduce, nullptr), "weftCommSetFusion(NULL)");
  runModeled(ctx, "setting NULL 1000 x 4 KiB", ops, Layout::kContiguous, s, 1);
  applyAll(ctx.view.comm, s);
  const std::vector<TypeOp> combos = typeOps(kAvgMaxTypesLarge);
  for (size_t k = 0; k < combos.size(); ++k) {
    ops =
        generate(1000, [&](int i) { return allReduce(combos[k], countFor(4 << 10, combos[k].type), i % 3 == 0); });
    runModeled(ctx, "auto 1000 x 4 KiB " + typeOpName(combos[k]), ops, alternate(k), s, 1);
    const bool uniform = (combos[k].type == weftInt8 && combos[k].op == weftSum) ||
                         (combos[k].type == weftFloat32 && combos[k].op == weftSum) ||
                         (combos[k].type == weftBfloat16 && combos[k].op == weftAvg);
    if (!uniform) continue;
    for (bool inPlace : {false, true}) {
      runModeled(ctx,
                 std::string("auto 1000 x 4 KiB all ") + (inPlace ? "in place " : "out of place ") +
                     typeOpName(combos[k]),
                 allPlaced(ops, inPlace), Layout::kContiguous, s, 1);
    }
  }
}

// 5. Off: one collective per call.
void caseOff(Context& ctx) {
  Settings s = allAuto();
  s.allReduce.mode = weftFusionOff;
  applyAll(ctx.view.comm, s);
  for (const TypeOp& t : typeOps(kAvgMaxTypes)) {
    std::vector<OpSpec> ops = generate(50, [&](int i) { return allReduce(t, 1 + (i * 13) % 200, i % 2); });
    runModeled(ctx, "off 50 AllReduces " + typeOpName(t), ops,
               alternate(static_cast<size_t>(t.type) + static_cast<size_t>(t.op)), s, 50);
  }
}

// 6. AllGather and ReduceScatter: 20 ops of differing counts fused in auto mode; their byte counting in
// size mode (AllGather: sendcount; ReduceScatter: recvcount * nranks).
void caseGatherScatter(Context& ctx) {
  const Settings s = allAuto();
  applyAll(ctx.view.comm, s);
  const size_t n = static_cast<size_t>(ctx.view.size);
  for (const TypeOp& t : typeOps(kAvgMaxTypes)) {
    std::vector<OpSpec> gathers, scatters, both;
    for (int i = 0; i < 20; ++i) {
      gathers.push_back(withColl(allReduce(t, 1 + (i * 29) % 500, i % 2, i % 5 ? Call::kPlain : Call::kExAttr),
                                 weftCollAllGather));
      scatters.push_back(
          withColl(allReduce(t, 1 + (i * 31) % 400, i % 3 == 0, i % 4 ? Call::kPlain : Call::kExNull),
                   weftCollReduceScatter));
      if (i < 10) both.insert(both.end(), {gathers.back(), scatters.back()});
    }
    for (Layout l : kLayouts) {
      if (t.op == weftSum) runModeled(ctx, "auto 20 AllGathers " + typeOpName(t), gathers, l, s, 1);
      runModeled(ctx, "auto 20 ReduceScatters " + typeOpName(t), scatters, l, s, 1);
    }
    runModeled(ctx, "auto AllGather/ReduceScatter interleaved " + typeOpName(t), both, Layout::kSeparate, s, 2);
    for (bool inPlace : {false, true}) {
      const std::string place = inPlace ? " all in place " : " all out of place ";
      if (t.op == weftSum) {
        runModeled(ctx, "auto 20 AllGathers" + place + typeOpName(t), allPlaced(gathers, inPlace),
                   Layout::kContiguous, s, 1);
      }
      runModeled(ctx, "auto 20 ReduceScatters" + place + typeOpName(t), allPlaced(scatters, inPlace),
                 Layout::kContiguous, s, 1);
    }
  }
  const size_t count = 100;
  for (const TypeOp& t : typeOps({})) {
    const size_t block = count * colltest::typeInfo(t.type).size;
    Settings sized = allAuto();
    sized.allGather = {weftFusionSize, 4 * block, {}};
    sized.reduceScatter = {weftFusionSize, 4 * block * n, {}};
    applyAll(ctx.view.comm, sized);
    std::vector<OpSpec> gathers, scatters;
    for (int i = 0; i < 10; ++i) {
      gathers.push_back(withColl(allReduce(t, count, i % 2), weftCollAllGather));
      scatters.push_back(withColl(allReduce(t, count, i % 2 == 0), weftCollReduceScatter));
    }
    runModeled(ctx, "size 4 ops' bytes 10 AllGathers " + typeOpName(t), gathers, Layout::kContiguous, sized, 3);
    runModeled(ctx, "size 4 ops' bytes 10 ReduceScatters " + typeOpName(t), scatters, Layout::kSeparate, sized, 3);
  }
  applyAll(ctx.view.comm, s);
  // Large enough that each fused collective runs in several pieces (fusion/fused_run.cpp: 512 KiB of input
  // or output), with members straddling the pieces' edges.
  for (const TypeOp& t : typeOps({})) {
    if (t.type != weftInt8 && t.type != weftBfloat16 && t.type != weftFloat32) continue;
    std::vector<OpSpec> reduces, gathers, scatters;
    for (int i = 0; i < 6; ++i) {
      const size_t large = 70001 + static_cast<size_t>(i) * 4099;
      reduces.push_back(allReduce(t, large, i % 2));
      gathers.push_back(withColl(allReduce(t, large / n, i % 2), weftCollAllGather));
      scatters.push_back(withColl(allReduce(t, large / n, i % 2 == 0), weftCollReduceScatter));
    }
    for (Layout l : kLayouts) {
      runModeled(ctx, "auto 6 large AllReduces " + typeOpName(t), reduces, l, s, 1);
      runModeled(ctx, "auto 6 large AllGathers " + typeOpName(t), gathers, l, s, 1);
      runModeled(ctx, "auto 6 large ReduceScatters " + typeOpName(t), scatters, l, s, 1);
    }
  }
}

// 7. Operations that differ in datatype, op, stream, collective or fusion id, interleaved: one launch each.
void caseMixedKeys(Context& ctx) {
  const Settings s = allAuto();
  applyAll(ctx.view.comm, s);
  for (size_t k = 0; k < WEFT_NUM_DATA_TYPES; ++k) {
    const TypeOp a{colltest::kAllTypes[k], weftSum};
    const TypeOp b{colltest::kAllTypes[(k + 1) % WEFT_NUM_DATA_TYPES], weftSum};
    std::vector<OpSpec> ops =
        generate(10, [&](int i) { return allReduce(i % 2 ? b : a, 10 + i * 17, i % 3 == 0); });
    runModeled(ctx, "two types alternating " + typeOpName(a) + " " + typeOpName(b), ops, alternate(k), s, 2);
  }
  for (weftDataType_t type : kAvgMaxTypes) {
    const std::vector<OpSpec> ops = generate(15, [&](int i) {
      return allReduce({type, colltest::kAllOps[i % WEFT_NUM_RED_OPS]}, 20 + i * 11, i % 2);
    });
    runModeled(ctx, "sum/prod/max/min/avg alternating " + std::string(colltest::typeInfo(type).name), ops,
               Layout::kSeparate, s, 5);
    const weftCollType_t kinds[3] = {weftCollAllReduce, weftCollAllGather, weftCollReduceScatter};
    const std::vector<OpSpec> colls = generate(15, [&](int i) {
      return withColl(allReduce({type, weftSum}, 5 + i * 7, i % 2), kinds[i % 3]);
    });
    runModeled(ctx, "AllReduce/AllGather/ReduceScatter alternating " + std::string(colltest::typeInfo(type).name),
               colls, Layout::kContiguous, s, 3);
    std::vector<OpSpec> streams;
    for (int i = 0; i < 10; ++i) {
      streams.push_back(allReduce({type, weftSum}, 30 + i, i % 3 == 0));
      streams.back().onStream = i % 2;
    }
    runModeled(ctx, "NULL stream and a created stream alternating " + std::string(colltest::typeInfo(type).name),
               streams, Layout::kSeparate, s, 2);
  }
  const TypeOp f32{weftFloat32, weftSum}, f64{weftFloat64, weftSum};
  const std::vector<OpSpec> idsAndTypes = {allReduce(f32, 10, false, Call::kExAttr, 2),
                                           allReduce(f64, 11, false, Call::kExAttr, 2),
                                           allReduce(f32, 12, true),
                                           allReduce(f32, 13, false, Call::kExAttr, 2),
                                           allReduce(f64, 14, true, Call::kExAttr, 2),
                                           allReduce(f32, 15, false, Call::kExNull)};
  for (Layout l : kLayouts) runModeled(ctx, "fusion ids x types", idsAndTypes, l, s, 3);
}

// 8. A later op reading what an earlier one in the group writes: not fused across the dependency.
void caseDependent(Context& ctx) {
  applyAll(ctx.view.comm, allAuto());
  for (const TypeOp& t : typeOps(kAvgMaxTypes)) {
    const std::string name = typeOpName(t);
    OpSpec first = allReduce(t, 333, false);
    OpSpec second = allReduce(t, 333, false);
    second.inputOf = 0;
    OpSpec third = second;
    third.inputOf = 1;
    for (Layout l : kLayouts) {
      runGroup(ctx, "a->b, b->c " + name, {first, second}, l, {2, 0});
      runGroup(ctx, "a->b, b->c, c->d " + name, {first, second, third}, l, {3, 0});
    }
    OpSpec inPlaceFirst = allReduce(t, 257, true);
    OpSpec inPlaceSecond = inPlaceFirst;
    inPlaceSecond.inputOf = 0;
    runGroup(ctx, "in place twice on b " + name, {inPlaceFirst, inPlaceSecond}, Layout::kSeparate, {2, 0});
    // Independent ops around the chain: x1 and a->b fuse, then b->c and x2.
    OpSpec x = allReduce(t, 100, false);
    OpSpec mid = second;
    mid.inputOf = 1;
    const std::vector<OpSpec> around = {x, first, mid, allReduce(t, 90, true)};
    for (Layout l : kLayouts) runGroup(ctx, "x1, a->b, b->c, x2 " + name, around, l, {2, -1});
    // Part of an output read: the second half of b, directly, then after an unrelated op.
    OpSpec wide = allReduce(t, 400, false);
    OpSpec half = allReduce(t, 200, false);
    half.inputOf = 0;
    half.inputOffset = 200;
    runGroup(ctx, "a->b, b[200:400]->c " + name, {wide, half}, Layout::kContiguous, {2, 0});
    half.inputOf = 1;
    runGroup(ctx, "x, a->b, b[200:400]->c " + name, {x, wide, half}, Layout::kSeparate, {2, -1});
    half.inPlace = true;
    runGroup(ctx, "x, a->b, in place on b[200:400] " + name, {x, wide, half}, Layout::kContiguous, {2, -1});
    // Across keys: b read by an op (max) whose key's bucket opened before b was written (sum) must not
    // join that bucket; nor may an op (sum) writing what an op of another key (max) read since.
    if (t.op == weftSum) {
      const TypeOp maxOp{t.type, weftMax};
      OpSpec readsB = allReduce(maxOp, 400, false);
      readsB.inputOf = 1;
      runGroup(ctx, "max x, sum a->b, max b->c " + name, {allReduce(maxOp, 60, true), wide, readsB},
               Layout::kSeparate, {3, 0});
      OpSpec writesA = allReduce(t, 400, false);
      writesA.outputInto = 1;
      runGroup(ctx, "sum x->y, max a->m, sum c->a " + name,
               {allReduce(t, 60, false), allReduce(maxOp, 400, false), writesA}, Layout::kContiguous, {3, 0});
    }
    // A later op writing what an earlier one reads (the rules leave open whether they fuse).
    OpSpec over = allReduce(t, 400, false);
    over.outputInto = 0;
    for (Layout l : kLayouts) runGroup(ctx, "a->b, c->a " + name, {wide, over}, l, {-1, -1});
    over.count = 150;
    over.outputOffset = 250;
    runGroup(ctx, "a->b, c->a[250:400] " + name, {wide, over}, Layout::kContiguous, {-1, -1});
    // Sliding: [x0 | x1 | x2] -> op0 reads x1 into x0, op1 x2 into x1: both ranges end to end, the
    // outputs overlapping the inputs.
    OpSpec slide0 = allReduce(t, 300, false), slide1 = allReduce(t, 300, false);
    slide0.sendAt = 300;
    slide0.recvAt = 0;
    slide1.sendAt = 600;
    slide1.recvAt = 300;
    runGroup(ctx, "sliding x1->x0, x2->x1 " + name, {slide0, slide1}, Layout::kContiguous, {-1, -1});
  }
}

// 7 (continued). Fusion stays within a group and within a communicator: consecutive groups, calls outside any
// group, a group on a created stream still running while the next one (NULL stream) runs, two communicators in one
// group (the index mode's positions counted per communicator), and zero-count calls among others.
void caseGroupsAndComms(Context& ctx) {
  const Settings s = allAuto();
  applyAll(ctx.view.comm, s);
  const std::vector<TypeOp> combos = typeOps({weftFloat16});
  for (size_t k = 0; k < combos.size(); ++k) {
    std::vector<OpSpec> ops = generate(12, [&](int i) { return allReduce(combos[k], 50 + i * 9, i % 2); });
    const std::string name = typeOpName(combos[k]);
    runModeled(ctx, "3 groups of 4 " + name, ops, alternate(k), {s}, {3}, Issue{{0, 4, 8}, false});
    runModeled(ctx, "no group " + name, ops, alternate(k + 1), {s}, {12}, Issue{{}, true});
  }
  for (const TypeOp& t : {TypeOp{weftFloat32, weftSum}, TypeOp{weftBfloat16, weftMax}}) {
    std::vector<OpSpec> ops;
    for (int i = 0; i < 20; ++i) {
      ops.push_back(allReduce(t, countFor(64 << 10, t.type), i % 3 == 0));
      ops.back().onStream = i < 10;
    }
    for (Layout l : kLayouts) {
      runModeled(ctx, "a stream's group, then a NULL stream's " + typeOpName(t), ops, l, {s}, {2}, Issue{{0, 10}});
    }
    // Send/Recv (a ring) in between: one launch each, the AllReduces around them still one.
    OpSpec send = allReduce(t, 77, false), recv = allReduce(t, 77, false);
    send.coll = weftCollSend;
    recv.coll = weftCollRecv;
    recv.inputOf = 1;
    const std::vector<OpSpec> p2p = {allReduce(t, 30, true), send, allReduce(t, 40, false), recv,
                                     allReduce(t, 50, true)};
    for (Layout l : kLayouts) runModeled(ctx, "Send/Recv among AllReduces " + typeOpName(t), p2p, l, s, 3);
    std::vector<OpSpec> zeros = {allReduce(t, 100, false), allReduce(t, 0, false), allReduce(t, 50, true),
                                 allReduce(t, 0, true)};
    for (Layout l : kLayouts) runModeled(ctx, "zero-count calls among others " + typeOpName(t), zeros, l, s, 1);
  }

  colltest::CommView& second = ctx.second;
  colltest::expectOk(weftCommSplit(ctx.view.comm, 0, ctx.view.rank, &second.comm), "weftCommSplit");
  second.rank = ctx.view.rank;
  second.size = ctx.view.size;
  second.ids = ctx.view.ids;
  second.name = "second";
  Settings indexed = allAuto();
  indexed.allReduce = {weftFusionIndex, 0, {5}};
  applyAll(ctx.view.comm, indexed);
  for (const TypeOp& t : typeOps({weftInt32})) {
    std::vector<OpSpec> ops, gathers;
    for (int i = 0; i < 12; ++i) {
      ops.push_back(allReduce(t, 40 + i, i % 4 == 1));
      ops.back().comm = i % 2;
      gathers.push_back(withColl(ops.back(), weftCollAllGather));
    }
    runModeled(ctx, "two communicators, index [5] on the first " + typeOpName(t), ops, Layout::kSeparate,
               {indexed, s}, {2, 1});
    if (t.op == weftSum) {
      runModeled(ctx, "AllGathers on two communicators " + typeOpName(t), gathers, Layout::kContiguous,
                 {indexed, s}, {1, 1});
    }
  }
  applyAll(ctx.view.comm, s);
  colltest::destroyComm(second);
}

}  // namespace fusiontest
