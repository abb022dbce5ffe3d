// wasm-bench's worker for V8 (Node.js): one workload, instantiated once,
// called on request. Requests arrive one per line on stdin, answers leave
// one per line on stdout (this process's own pipes, not the host's):
//   load EXPORT MAX_MEMORY_BYTES HEX   -> ok COMPILE_NS INSTANTIATE_NS | err WHY
//   setup SIZE                         -> ok | err WHY
//   sample COUNT SEED                  -> ok ELAPSED_NS PAUSES CHECKSUM | err WHY
//   memory                             -> ok PEAK_BYTES (-1: no exported memory)
//   program MAX_MEMORY_BYTES HEX       -> ok IMPORTS_END (1 or 0) COMPILE_NS | err WHY
//   iterate JSON                       -> ok JSON | err WHY
// `load` and `program` time V8's compile (new WebAssembly.Module) and
// `load` the instantiation, with process.hrtime.bigint().
// `program` compiles a WASI command module (a program) once; each
// `iterate` collects garbage (when node runs with --expose-gc), then makes
// a fresh instance with a fresh node:wasi context (the JSON
// names the folder to preopen, the grants, the files its stdout and
// stderr go to, the seed of its random numbers, which `random_get`
// draws from the host's generator rather than node's, and whether its
// wall clock is the system's or the host's stepped one), and answers with
// the instantiation and the run's times, the regions between bench.start
// and bench.end (read with process.hrtime.bigint()), and how the run ended.
// `sample` reads process.hrtime.bigint() right before and right after
// run(count, seed), and nothing else sits between the two reads; the time
// spent between bench.pause and bench.resume is taken off. WASI preview 1
// grants nothing: no arguments, environment or folders, stdin empty,
// stdout and stderr discarded. The memory and table limits are node's
// flags (--wasm-max-mem-pages, --wasm-max-table-size), held within a call;
// the checks after a call here are a second line.
'use strict';
const fs = require('node:fs');
const readline = require('node:readline');

let exports_ = null;
let run = null;
let memoryCap = 0;
let peak = -1;
let pausedSince = -1n;
let paused = 0n;
let pauses = 0;

function answer(text) {
  fs.writeSync(1, text + '\n');
}

function pause() {
  if (pausedSince >= 0n) throw new Error('pause called while already paused');
  pauses += 1;
  pausedSince = process.hrtime.bigint();
}

function resume() {
  const now = process.hrtime.bigint();
  if (pausedSince < 0n) throw new Error('resume called without pause');
  paused += now - pausedSince;
  pausedSince = -1n;
}

function wasiImports() {
  const { WASI } = require('node:wasi');
  const nothing = fs.openSync('/dev/null', 'r+');
  return new WASI({
    version: 'preview1', args: [], env: {}, preopens: {},
    stdin: nothing, stdout: nothing, stderr: nothing, returnOnExit: true,
  });
}

function load(exportName, cap, hex) {
  memoryCap = Number(cap);
  const bytes = Buffer.from(hex, 'hex');
  const c0 = process.hrtime.bigint();
  const module = new WebAssembly.Module(bytes);
  const c1 = process.hrtime.bigint();
  const imports = {};
  let wasi = null;
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module === 'bench' && (imp.name === 'pause' || imp.name === 'resume')) {
      imports.bench = { pause, resume };
    } else if (imp.module === 'wasi_snapshot_preview1') {
      wasi = wasi || wasiImports();
      imports.wasi_snapshot_preview1 = wasi.wasiImport;
    } else {
      throw new Error(`import ${imp.module}.${imp.name} is not provided under v8`);
    }
  }
  const i0 = process.hrtime.bigint();
  const instance = new WebAssembly.Instance(module, imports);
  const i1 = process.hrtime.bigint();
  exports_ = instance.exports;
  if (wasi) {
    // node:wasi reaches the guest's memory once initialized (which also
    // runs a reactor's `_initialize`).
    if (!(exports_.memory instanceof WebAssembly.Memory)) {
      throw new Error('imports WASI but exports no memory, which node:wasi needs');
    }
    wasi.initialize(instance);
  } else if (typeof exports_._initialize === 'function') {
    exports_._initialize();
  }
  run = exports_[exportName];
  if (typeof run !== 'function') throw new Error(`export \`${exportName}\` is not a function`);
  checkMemory();
  answer(`ok ${c1 - c0} ${i1 - i0}`);
}

// The memory cap is checked after every call too (node's flag holds it
// within the call).
function checkMemory() {
  const memory = exports_.memory;
  if (!(memory instanceof WebAssembly.Memory)) return;
  const bytes = memory.buffer.byteLength;
  if (bytes > peak) peak = bytes;
  if (bytes > memoryCap) {
    throw new Error(`linear memory grew to ${bytes} bytes: over the --max-memory limit of ${memoryCap} bytes`);
  }
}

function setup(size) {
  const f = exports_.setup;
  if (typeof f === 'function') f(BigInt.asIntN(64, BigInt(size)));
  if (pausedSince >= 0n) throw new Error('`setup` returned while paused (pause without resume)');
  checkMemory();
  answer('ok');
}

function sample(countText, seedText) {
  const count = BigInt.asIntN(64, BigInt(countText));
  const seed = BigInt.asIntN(64, BigInt(seedText));
  pausedSince = -1n;
  paused = 0n;
  pauses = 0;
  const start = process.hrtime.bigint();
  const result = run(count, seed);
  const end = process.hrtime.bigint();
  if (pausedSince >= 0n) throw new Error('`run` returned while paused (pause without resume)');
  checkMemory();
  answer(`ok ${end - start - paused} ${pauses} ${BigInt.asUintN(64, BigInt(result))}`);
}

let program = null;

function compileProgram(cap, hex) {
  memoryCap = Number(cap);
  const bytes = Buffer.from(hex, 'hex');
  const c0 = process.hrtime.bigint();
  const module = new WebAssembly.Module(bytes);
  const c1 = process.hrtime.bigint();
  let importsEnd = false;
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module === 'bench' && (imp.name === 'start' || imp.name === 'end')) {
      importsEnd = importsEnd || imp.name === 'end';
    } else if (imp.module !== 'wasi_snapshot_preview1') {
      throw new Error(`imports \`${imp.module}.${imp.name}\`: a program may import functions of WASI preview 1, \`bench.start\` and \`bench.end\`, nothing else`);
    }
  }
  program = module;
  answer(`ok ${importsEnd ? 1 : 0} ${c1 - c0}`);
}

// SplitMix64's finaliser of `x` plus its increment, in 64 bits.
const MASK64 = (1n << 64n) - 1n;
const GOLDEN = 0x9E3779B97F4A7C15n;
function splitmix64(x) {
  let z = (x + GOLDEN) & MASK64;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
  return z ^ (z >> 31n);
}

// The host's generator of a program's random numbers (the Rust
// `GuestRandom`): xoshiro128**, its state the two SplitMix64 outputs that
// follow `seed`; each call gives the next 32 bits.
function guestRandom(seed) {
  const a = splitmix64(seed);
  const b = splitmix64((seed + GOLDEN) & MASK64);
  const low = (x) => Number(x & 0xFFFFFFFFn);
  const s = new Uint32Array([low(a), low(a >> 32n), low(b), low(b >> 32n)]);
  const rotl = (x, k) => (x << k) | (x >>> (32 - k));
  return () => {
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  };
}

// WASI's EFAULT: a buffer outside the guest's memory.
const EFAULT = 21;

// The `len` bytes of the guest's memory at `ptr`, or null when they lie
// outside it.
function guestBytes(memory, ptr, len) {
  try {
    return new Uint8Array(memory().buffer, ptr >>> 0, len >>> 0);
  } catch (e) {
    return null;
  }
}

// `random_get` answered as wasmtime-wasi answers it with the host's
// generator: a byte per draw, its low 8 bits; a buffer outside the
// guest's memory is EFAULT.
function randomGet(next, memory) {
  return (buf, len) => {
    const bytes = guestBytes(memory, buf, len);
    if (bytes === null) return EFAULT;
    for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 0xFF;
    return 0;
  };
}

// A program's wall clock unless it is granted the system's (the Rust
// `GuestWallClock`): it starts at 2020-01-01T00:00:00Z, each read gives
// 1 µs more, and its resolution is 1 µs; a result outside the guest's
// memory is EFAULT. The other clocks are node's.
const CLOCK_STEP_NS = 1000n;
const CLOCK_EPOCH_NS = 1577836800n * 1000000000n;

function steppedWallClock(wasiImport, memory) {
  const REALTIME = 0;
  let reads = 0n;
  const store = (ptr, value) => {
    const bytes = guestBytes(memory, ptr, 8);
    if (bytes === null) return EFAULT;
    new DataView(bytes.buffer, bytes.byteOffset, 8).setBigUint64(0, value, true);
    return 0;
  };
  return {
    clock_time_get(id, precision, ptr) {
      if (id !== REALTIME) return wasiImport.clock_time_get(id, precision, ptr);
      const value = (CLOCK_EPOCH_NS + reads * CLOCK_STEP_NS) & MASK64;
      reads += 1n;
      return store(ptr, value);
    },
    clock_res_get(id, ptr) {
      if (id !== REALTIME) return wasiImport.clock_res_get(id, ptr);
      return store(ptr, CLOCK_STEP_NS);
    },
  };
}

// One fresh instance of the program, run as `world` says.
function iterate(world) {
  // What earlier instances left (their memories) is collected here, not
  // during the run.
  if (typeof global.gc === 'function') global.gc();
  const { WASI } = require('node:wasi');
  const preopens = {};
  if (world.root) preopens['/'] = world.folder;
  preopens['.'] = world.folder;
  for (const [host, guest] of world.dirs) preopens[guest] = host;
  const stdin = fs.openSync('/dev/null', 'r');
  const stdout = fs.openSync(world.stdout, 'w');
  const stderr = fs.openSync(world.stderr, 'w');
  const regions = [];
  let started = -1n;
  let error = null;
  try {
    const wasi = new WASI({
      version: 'preview1', args: world.args, env: Object.fromEntries(world.env),
      preopens, stdin, stdout, stderr, returnOnExit: true,
    });
    const bench = {
      start() { started = process.hrtime.bigint(); },
      end() {
        const now = process.hrtime.bigint();
        if (started < 0n) { error = error || 'bench.end called before bench.start'; return; }
        regions.push(Number(now - started));
        started = -1n;
      },
    };
    let instance = null;
    const guestMemory = () => instance.exports.memory;
    const random_get = randomGet(guestRandom(BigInt(world.seed)), guestMemory);
    const clock = world.real_clock ? {} : steppedWallClock(wasi.wasiImport, guestMemory);
    const t0 = process.hrtime.bigint();
    instance = new WebAssembly.Instance(program, {
      wasi_snapshot_preview1: { ...wasi.wasiImport, random_get, ...clock }, bench,
    });
    const t1 = process.hrtime.bigint();
    let exit = null;
    let failed = null;
    const t2 = process.hrtime.bigint();
    try {
      // node:wasi starts only an instance that exports its memory; one
      // that exports none cannot have a WASI call answered anyway.
      if (instance.exports.memory instanceof WebAssembly.Memory) {
        exit = wasi.start(instance);
      } else if (typeof instance.exports._start === 'function') {
        instance.exports._start();
      } else {
        throw new Error('export `_start`: not a function');
      }
    } catch (e) {
      failed = (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).replace(/\s+/g, ' ');
    }
    const t3 = process.hrtime.bigint();
    const memory = instance.exports.memory;
    if (memory instanceof WebAssembly.Memory && memory.buffer.byteLength > memoryCap) {
      failed = failed || `linear memory grew to ${memory.buffer.byteLength} bytes: over the --max-memory limit of ${memoryCap} bytes`;
    }
    answer('ok ' + JSON.stringify({
      instantiate: Number(t1 - t0), whole: Number(t3 - t2), exit, failed,
      regions, open: started >= 0n, error,
    }));
  } finally {
    fs.closeSync(stdin);
    fs.closeSync(stdout);
    fs.closeSync(stderr);
  }
}

const requests = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
requests.on('line', (line) => {
  const words = line.split(' ');
  try {
    switch (words[0]) {
      case 'load': load(words[1], words[2], words[3]); break;
      case 'setup': setup(words[1]); break;
      case 'sample': sample(words[1], words[2]); break;
      case 'memory': answer(`ok ${peak}`); break;
      case 'program': compileProgram(words[1], words[2]); break;
      case 'iterate': iterate(JSON.parse(line.slice('iterate '.length))); break;
      default: throw new Error(`unknown request ${words[0]}`);
    }
  } catch (e) {
    const why = (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).replace(/\s+/g, ' ');
    answer(`err ${why}`);
  }
});
requests.on('close', () => process.exit(0));
