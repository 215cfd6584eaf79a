// ---------------------------------------------------------------------------------------
// The launcher: the same in every module pyshader-tx writes (backend_js/runtime.js). It
// reads the constants above (KERNEL, features, workgroupSize, the WGSL, the layouts) and
// needs nothing but the WebGPU API: it packs the uniform block as pyshader_tx's Python
// launcher does (runtime/uniforms.py), uploads typed arrays (vec3 and matrix columns padded
// to WGSL's strides, as runtime/arrays.py pads numpy arrays), folds large 1-D launches
// (runtime/dispatch.py), reads the written arrays back and shows what the kernel printed
// as the Python runtime does (pyshader_tx/printing.py).
// ---------------------------------------------------------------------------------------

// GPUBufferUsage and GPUMapMode bits (numbers, so that the module loads without globals).
const USAGE = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 };
const MAP_READ = 0x1;
const TYPED_ARRAYS = { f32: Float32Array, i32: Int32Array, u32: Uint32Array, f16: Uint16Array };
const INT_RANGES = { i32: [-(2 ** 31), 2 ** 31 - 1], u32: [0, 2 ** 32 - 1] };
const FLOAT_MAX = { f32: 3.4028234663852886e38, f16: 65504 };
const FOLD_SEARCH = 256; // how far above the least Y foldWorkgroups looks for an exact divisor

function argumentError(name, text, Kind = TypeError) {
  return new Kind(`parameter '${name}' of ${KERNEL.name}: ${text}`);
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of ${value.length}`;
  if (typeof value === 'object') return value.constructor?.name ?? 'an object';
  return `${typeof value} ${String(value)}`;
}

// -- scalars: f16 bits ------------------------------------------------------------------

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** The binary16 bits of `value`, rounded to nearest even as numpy's float16 does. */
export function f16Bits(value) {
  f32Scratch[0] = value;
  const bits = u32Scratch[0];
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0); // inf, NaN
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow: inf
  if (e <= 0) {
    if (e < -10) return sign; // underflow: zero
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    if (rest > midpoint || (rest === midpoint && half & 1)) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half += 1; // may carry into inf
  return sign | half;
}

/** The value of binary16 bits (for reading f16 results and printed values). */
export function f16Value(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

// -- the uniform block --------------------------------------------------------------------

function writeScalar(view, offset, scalar, value, what) {
  if (scalar === 'bool') {
    if (value === true || value === false || value === 0 || value === 1) {
      view.setUint32(offset, value ? 1 : 0, true);
      return;
    }
    throw new TypeError(`${what}expected a bool, got ${describe(value)}`);
  }
  if (typeof value === 'boolean' || (typeof value !== 'number' && typeof value !== 'bigint')) {
    throw new TypeError(`${what}expected a number for ${scalar}, got ${describe(value)}`);
  }
  if (scalar in INT_RANGES) {
    const number = Number(value);
    if (!Number.isInteger(number)) {
      throw new TypeError(`${what}expected an integer for ${scalar}, got ${value}`);
    }
    const [low, high] = INT_RANGES[scalar];
    if (number < low || number > high) {
      throw new RangeError(`${what}${value} is out of range for ${scalar} [${low}, ${high}]`);
    }
    if (scalar === 'i32') view.setInt32(offset, number, true);
    else view.setUint32(offset, number, true);
  } else {
    const number = Number(value);
    if (Number.isFinite(number) && Math.abs(number) > FLOAT_MAX[scalar]) {
      throw new RangeError(`${what}${value} is out of range for ${scalar}`);
    }
    if (scalar === 'f32') view.setFloat32(offset, number, true);
    else view.setUint16(offset, f16Bits(number), true);
  }
}

function components(value, count, what, layout) {
  if (value === null || typeof value !== 'object' || typeof value.length !== 'number') {
    throw new TypeError(
      `${what}expected ${count} values for ${layout.type}, got ${describe(value)}`,
    );
  }
  if (value.length !== count) {
    throw new RangeError(`${what}expected ${count} values for ${layout.type}, got ${value.length}`);
  }
  return value;
}

/** Write `value` with `layout` (a scalar, vector, matrix, struct or fixed array) at `offset`. */
function writeValue(view, offset, layout, value, what) {
  switch (layout.kind) {
    case 'scalar':
      writeScalar(view, offset, layout.scalar, value, what);
      break;
    case 'vector': {
      const items = components(value, layout.size, what, layout);
      for (let k = 0; k < layout.size; k++) {
        const width = layout.scalar === 'f16' ? 2 : 4;
        writeScalar(view, offset + k * width, layout.scalar, items[k], `${what}component ${k}: `);
      }
      break;
    }
    case 'matrix': {
      // Columns: [[c0r0, c0r1, ...], [c1r0, ...]] or the columns one after the other.
      const { columns, rows, columnStride, scalar } = layout;
      const flat = components(
        value,
        value?.length === columns ? columns : columns * rows,
        what,
        layout,
      );
      for (let c = 0; c < columns; c++) {
        const column = flat.length === columns ? components(flat[c], rows, what, layout) : null;
        for (let r = 0; r < rows; r++) {
          const item = column ? column[r] : flat[c * rows + r];
          const width = scalar === 'f16' ? 2 : 4;
          writeScalar(view, offset + c * columnStride + r * width, scalar, item, what);
        }
      }
      break;
    }
    case 'array': {
      const items = components(value, layout.length, what, layout);
      for (let k = 0; k < layout.length; k++) {
        writeValue(view, offset + k * layout.stride, layout.element, items[k], `${what}[${k}]: `);
      }
      break;
    }
    case 'struct': {
      // An object with the fields, the fields in order, or the struct's bytes.
      if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
        const bytes = ArrayBuffer.isView(value)
          ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
          : new Uint8Array(value);
        if (bytes.length !== layout.size) {
          throw new RangeError(
            `${what}a ${layout.type} takes ${layout.size} bytes, got ${bytes.length}`,
          );
        }
        new Uint8Array(view.buffer, view.byteOffset + offset, layout.size).set(bytes);
        break;
      }
      const names = layout.fields.map((field) => field.name);
      let items;
      if (Array.isArray(value)) {
        if (value.length !== names.length) {
          throw new RangeError(
            `${what}${layout.type} has ${names.length} fields [${names}], got ${value.length} values`,
          );
        }
        items = value;
      } else if (value !== null && typeof value === 'object') {
        const missing = names.filter((name) => !(name in value));
        const extra = Object.keys(value).filter((key) => !names.includes(key));
        if (missing.length || extra.length) {
          const problem = missing.length
            ? `missing fields [${missing}]`
            : `unknown fields [${extra}]`;
          throw new RangeError(`${what}${layout.type} has fields [${names}]: ${problem}`);
        }
        items = names.map((name) => value[name]);
      } else {
        throw new TypeError(
          `${what}expected a ${layout.type} (an object of its fields), got ${describe(value)}`,
        );
      }
      layout.fields.forEach((field, k) => {
        writeValue(
          view,
          offset + field.offset,
          field.layout,
          items[k],
          `${what}field '${field.name}': `,
        );
      });
      break;
    }
    default:
      throw new TypeError(`${what}${layout.type} cannot be passed in the uniform block`);
  }
}

/** The uniform block's bytes for `args` (an object of the kernel's parameters), given the
 * shapes (outer dimensions) of the array arguments. */
function packUniforms(args, shapes) {
  const block = uniformLayout;
  const data = new ArrayBuffer(block.bufferSize);
  const view = new DataView(data);
  for (const member of block.members) {
    const what = `parameter '${member.param}' of ${KERNEL.name}: `;
    if (member.value === 'shape') {
      const shape = shapes[member.param];
      const dims = member.layout.kind === 'vector' ? member.layout.size : 1;
      for (let k = 0; k < dims; k++)
        writeScalar(view, member.offset + 4 * k, 'u32', shape[k], what);
    } else {
      writeValue(view, member.offset, member.layout, args[member.param], what);
    }
  }
  return new Uint8Array(data);
}

// -- arrays ---------------------------------------------------------------------------------

/** The bytes bound (and allocated) for `nbytes` of array data: whole 4-byte words, at least
 * one (as runtime/arrays.py's create_storage_buffer). */
function storageSize(nbytes) {
  return Math.max(4, Math.ceil(nbytes / 4) * 4);
}

function isGPUBuffer(value) {
  return value !== null && typeof value === 'object' && typeof value.mapAsync === 'function';
}

/** {param, shape, data: TypedArray | null, buffer: GPUBuffer | null, size} of one argument
 * (`size`: the bytes to bind, `storageSize` of its data's). */
function arrayArgument(param, value) {
  const element = param.element;
  let data = value;
  let shape = null;
  if (
    param.ndim > 1 ||
    (value !== null && typeof value === 'object' && 'data' in value && 'shape' in value)
  ) {
    if (
      value === null ||
      typeof value !== 'object' ||
      !('data' in value) ||
      !Array.isArray(value.shape)
    ) {
      throw argumentError(
        param.name,
        `expected {data, shape: [${param.ndim} dimensions]} for ${param.type}, got ${describe(value)}`,
      );
    }
    ({ data, shape } = value);
    if (shape.length !== param.ndim) {
      throw argumentError(
        param.name,
        `expected ${param.ndim} dimensions for ${param.type}, got shape [${shape}]`,
        RangeError,
      );
    }
  }
  if (isGPUBuffer(data)) {
    if (shape === null) shape = [Math.floor(data.size / element.stride)];
    const needed = shape.reduce((a, b) => a * b, 1) * element.stride;
    if (needed > data.size) {
      throw argumentError(
        param.name,
        `shape [${shape}] needs ${needed} bytes, the GPUBuffer has ${data.size}`,
        RangeError,
      );
    }
    if (needed === 0)
      throw argumentError(
        param.name,
        'the array is empty; a zero-size buffer cannot be bound',
        RangeError,
      );
    return { param, shape, data: null, buffer: data, size: storageSize(needed) };
  }
  let bytes;
  if (element.struct) {
    if (data instanceof ArrayBuffer) data = new Uint8Array(data);
    if (!ArrayBuffer.isView(data)) {
      throw argumentError(
        param.name,
        `expected a typed array of ${element.type} records (${element.stride} bytes each) or a GPUBuffer, got ${describe(data)}`,
      );
    }
    bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (bytes.length % element.stride) {
      throw argumentError(
        param.name,
        `${bytes.length} bytes are not a whole number of ${element.type} records (${element.stride} bytes each)`,
        RangeError,
      );
    }
  } else {
    const Wanted = TYPED_ARRAYS[element.scalar];
    const half = element.scalar === 'f16' && data?.constructor?.name === 'Float16Array';
    if (!(data instanceof Wanted) && !half) {
      throw argumentError(
        param.name,
        `expected a ${Wanted.name}${element.scalar === 'f16' ? ' (f16 bits) or Float16Array' : ''} or a GPUBuffer, got ${describe(data)}`,
      );
    }
    if (data.length % element.components) {
      throw argumentError(
        param.name,
        `${data.length} values are not a whole number of ${element.type} elements (${element.components} values each)`,
        RangeError,
      );
    }
  }
  const count = element.struct ? bytes.length / element.stride : data.length / element.components;
  if (shape === null) shape = [count];
  else if (shape.reduce((a, b) => a * b, 1) !== count) {
    throw argumentError(
      param.name,
      `shape [${shape}] holds ${shape.reduce((a, b) => a * b, 1)} elements, the data ${count}`,
      RangeError,
    );
  }
  if (count === 0)
    throw argumentError(
      param.name,
      'the array is empty; a zero-size buffer cannot be bound',
      RangeError,
    );
  return { param, shape, data, buffer: null, size: storageSize(count * element.stride) };
}

/** The `size` bytes to upload for `data`: the same bytes, or padded to WGSL's strides
 * (vec3, matrix columns of 3), then zeros up to `size`. */
function storageBytes(element, data, size) {
  if (data.constructor.name === 'Float16Array') data = Uint16Array.from(data, f16Bits);
  const source = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const out = new Uint8Array(size);
  if (!element.pad) {
    out.set(source);
    return out;
  }
  const [inner, padded] = element.pad; // values per row in the user's data and on the GPU
  const width = data.BYTES_PER_ELEMENT;
  const rows = data.length / inner;
  for (let k = 0; k < rows; k++) {
    out.set(source.subarray(k * inner * width, (k + 1) * inner * width), k * padded * width);
  }
  return out;
}

/** Copy GPU bytes back into the user's typed array (dropping the padding). */
function readInto(element, bytes, data) {
  if (data.constructor.name === 'Float16Array') {
    const bits = new Uint16Array(data.length);
    readInto(element, bytes, bits);
    for (let k = 0; k < bits.length; k++) data[k] = f16Value(bits[k]);
    return;
  }
  const target = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (!element.pad) {
    target.set(bytes.subarray(0, target.length));
    return;
  }
  const [inner, padded] = element.pad;
  const width = data.BYTES_PER_ELEMENT;
  const rows = data.length / inner;
  for (let k = 0; k < rows; k++) {
    target.set(bytes.subarray(k * padded * width, (k * padded + inner) * width), k * inner * width);
  }
}

// -- the dispatch shape -----------------------------------------------------------------------

/** The (X, Y) grid for `total` workgroups when X may be at most `limit` (runtime/dispatch.py). */
export function foldWorkgroups(total, limit) {
  const leastY = Math.ceil(total / limit);
  if (leastY > limit) {
    throw new RangeError(
      `${total} workgroups exceed what a folded 1-D launch can reach (${limit} x ${limit})`,
    );
  }
  for (let y = leastY; y <= Math.min(leastY + FOLD_SEARCH, limit); y++) {
    if (total % y === 0) return [total / y, y];
  }
  return [Math.ceil(total / leastY), leastY];
}

/** [X, Y] with X * Y === total and X, Y <= limit (Y the least such), or null. */
export function exactFold(total, limit) {
  let y = Math.ceil(total / limit);
  if (y > limit) return null;
  for (; y * y <= total; y++) if (total % y === 0) return [total / y, y];
  return null;
}

function countList(value, what) {
  const items = Array.isArray(value) ? value : [value];
  if (items.length < 1 || items.length > 3 || !items.every((n) => Number.isInteger(n) && n >= 0)) {
    throw new TypeError(
      `${what} takes a non-negative integer or a list of 1 to 3 of them, got ${JSON.stringify(value)}`,
    );
  }
  return items;
}

/** {groups: [X, Y, Z], folded} for a launch, or null for an empty one (compute_dispatch). */
export function computeDispatch(launch, limit) {
  const { threads, workgroups } = launch;
  const tooMany = (groups, what, hint) => {
    groups.forEach((n, axis) => {
      if (n > limit) {
        throw new RangeError(
          `${KERNEL.name}: ${what} ${n} workgroups in ${'xyz'[axis]}, more than the device's limit of ${limit} per dimension (${hint})`,
        );
      }
    });
  };
  if (workgroups !== undefined) {
    if (threads !== undefined)
      throw new TypeError(`${KERNEL.name}: give threads or workgroups, not both`);
    const counts = countList(workgroups, 'workgroups');
    while (counts.length < 3) counts.push(1);
    if (counts.includes(0)) return null;
    if (counts[0] > limit && counts[1] === 1 && counts[2] === 1) {
      const exact = exactFold(counts[0], limit);
      if (exact !== null) return { groups: [...exact, 1], folded: true };
      throw new RangeError(
        `${KERNEL.name}: workgroups=${counts[0]} exceeds the limit of ${limit} and has no factors that fit;` +
          ' the generated module has no variant for that count: launch with threads instead',
      );
    }
    tooMany(
      counts,
      `workgroups=${JSON.stringify(workgroups)} asks for`,
      'only 1-D launches are folded',
    );
    return { groups: counts, folded: false };
  }
  if (threads === undefined) {
    throw new TypeError(
      `${KERNEL.name}: dispatch needs {threads: n | [x, y, z]} or {workgroups: n | [x, y, z]}`,
    );
  }
  const counts = countList(threads, 'threads');
  if (counts.includes(0)) return null;
  const groups = counts.map((n, axis) => Math.ceil(n / workgroupSize[axis]));
  while (groups.length < 3) groups.push(1);
  if (counts.length === 1 && groups[0] > limit) {
    return { groups: [...foldWorkgroups(groups[0], limit), 1], folded: true };
  }
  tooMany(groups, `threads=${JSON.stringify(threads)} needs`, 'only 1-D launches are folded');
  return { groups, folded: false };
}

// -- print() ------------------------------------------------------------------------------------
// The text Python's runtime shows for the same print buffer (pyshader_tx/printing.py:
// read_records, format_value; runtime/prints.py): lines sorted by the printing invocation's
// global id (z, then y, then x), each invocation's in the order it printed; values as
// Python's str() of the bool, the int, or the numpy float32 / float16.

// Per float scalar: fraction bits, exponent bias, and the magnitude from which numpy's str()
// goes scientific (numpy >= 2.3: 1e6 for float32, 1e3 for float16; below 1e-4 too).
const FLOAT_FORMATS = {
  f32: { fraction: 23, bias: 127, positionalBelow: 1e6 },
  f16: { fraction: 10, bias: 15, positionalBelow: 1e3 },
};

/** [digits, exponent] of m * 2^e as numpy's Dragon4 gives them in its "unique" mode: the
 * fewest decimal digits that read back (round to nearest even) to the same float, the
 * nearer of the two candidates where both do; `exponent` is the power of ten of the first
 * digit. `narrow`: the gap to the float below is half the gap above (a power of two past
 * the smallest normal). */
function shortestDigits(m, e, narrow) {
  const big = BigInt;
  const shift = 2n ** big(Math.max(e - 2, 0)); // units of a quarter of the gap above
  const num = 4n * big(m) * shift; // the value is num / den
  const den = 2n ** big(Math.max(2 - e, 0));
  const high = 2n * shift; // half the gap above, in the same units
  const low = (narrow ? 1n : 2n) * shift; // half the gap below
  const even = m % 2 === 0;
  const pow10 = (k) => 10n ** big(k);
  // The decimal exponent of the first digit: 10^x <= value < 10^(x + 1).
  let x = Math.floor(Math.log10(m * 2 ** e));
  const atLeast = (k) => (k >= 0 ? num >= pow10(k) * den : num * pow10(-k) >= den);
  while (!atLeast(x)) x -= 1;
  while (atLeast(x + 1)) x += 1;
  for (let length = 1; ; length++) {
    const j = x - length + 1; // the power of ten of the last digit
    const up = pow10(Math.max(-j, 0));
    const a = num * up;
    const b = den * pow10(Math.max(j, 0));
    const q = a / b;
    const rest = a - q * b; // value - q * 10^j, in units of 10^j / b
    // q * 10^j, (q + 1) * 10^j inside the interval (its ends too for an even m, which
    // rounding to even reads back as m)
    const downFits = even ? rest <= low * up : rest < low * up;
    const upFits = even ? b - rest <= high * up : b - rest < high * up;
    if (!downFits && !upFits) continue;
    let digits = q;
    if (upFits && (!downFits || 2n * rest > b || (2n * rest === b && q % 2n === 1n))) digits += 1n;
    let text = digits.toString();
    if (text.length > length) x += 1; // 9.99... rounded up to 10
    text = text.replace(/0+$/, '');
    return [text, x];
  }
}

/** numpy's str() of a float32 or float16 (`scalar`) holding `value`: 0.1, 3.0, -0.0,
 * 1e+20, 1e-05, 1.6777216e+07, nan, inf. */
export function formatFloat(scalar, value) {
  const { fraction, bias, positionalBelow } = FLOAT_FORMATS[scalar];
  let bits;
  if (scalar === 'f32') {
    f32Scratch[0] = value;
    bits = u32Scratch[0];
  } else {
    bits = f16Bits(value);
  }
  const negative = bits >= 2 ** (fraction === 23 ? 31 : 15);
  const exponent = Math.floor(bits / 2 ** fraction) % (2 * bias + 2);
  const mantissa = bits % 2 ** fraction;
  const sign = negative ? '-' : '';
  if (exponent === 2 * bias + 1) return mantissa ? 'nan' : `${sign}inf`;
  if (exponent === 0 && mantissa === 0) return `${sign}0.0`;
  const m = exponent ? mantissa + 2 ** fraction : mantissa;
  const e = Math.max(exponent, 1) - bias - fraction;
  const [digits, x] = shortestDigits(m, e, mantissa === 0 && exponent > 1);
  const magnitude = m * 2 ** e;
  if (magnitude >= 1e-4 && magnitude < positionalBelow) {
    if (x < 0) return `${sign}0.${'0'.repeat(-x - 1)}${digits}`;
    const whole = digits.slice(0, x + 1).padEnd(x + 1, '0');
    return `${sign}${whole}.${digits.slice(x + 1) || '0'}`;
  }
  const mantissaText = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const power = String(Math.abs(x)).padStart(2, '0');
  return `${sign}${mantissaText}e${x < 0 ? '-' : '+'}${power}`;
}

/** The text of one printed value word of `scalar` (bool, i32, u32, f32; f16: the bits of
 * the f32 of equal value), as pyshader_tx/printing.py's WORD_DECODERS and SCALAR_FORMATS. */
export function formatWord(scalar, word) {
  if (scalar === 'bool') return word ? 'True' : 'False';
  if (scalar === 'u32') return String(word >>> 0);
  if (scalar === 'i32') return String(word | 0);
  u32Scratch[0] = word;
  return formatFloat(scalar, f32Scratch[0]);
}

/** The text of a print buffer's `words` (zeroed before the dispatch): the lines as
 * pyshader_tx/printing.py's read_records orders and formats them, then, if records were
 * dropped, the line that says so (as printing.py's dropped_message). */
function printedText(words, capacity) {
  const { sites, headerWords, recordHeaderWords } = KERNEL.prints;
  const records = [];
  let position = headerWords;
  while (position < words.length && words[position] >= 1 && words[position] <= sites.length) {
    const site = sites[words[position] - 1];
    if (position + site.recordWords > words.length) break; // (never written so: a safeguard)
    const [x, y, z] = words.subarray(position + 1, position + 4);
    records.push({ site, position, x, y, z });
    position += site.recordWords;
  }
  // By global id: z, then y, then x; each invocation's lines in order (sort is stable).
  records.sort((a, b) => a.z - b.z || a.y - b.y || a.x - b.x);
  let text = '';
  for (const { site, position: start } of records) {
    let at = start + recordHeaderWords;
    const texts = site.values.map(({ type, scalar, size, vector }) => {
      const parts = [];
      for (let k = 0; k < size; k++) parts.push(formatWord(scalar, words[at++]));
      return vector ? `${type}(${parts.join(', ')})` : parts[0];
    });
    const items = site.parts.map((part) => (typeof part === 'string' ? part : texts[part]));
    text += items.join(site.sep) + site.end;
  }
  const dropped = words[1]; // (word 1: the records that did not fit)
  if (dropped) {
    const lines = dropped === 1 ? 'line was' : 'lines were';
    text +=
      `[pyshader_tx] ${KERNEL.name}: ${dropped} printed ${lines} dropped: the print buffer` +
      ` holds ${capacity} lines per dispatch (raise printCapacity)\n`;
  }
  return text;
}

// -- the kernel ---------------------------------------------------------------------------------

/**
 * Compile the kernel on `device` (which must have the module's `features`) and return
 * `{dispatch, packUniforms, bindGroupLayout, pipeline}`.
 */
export async function createKernel(device) {
  const missing = features.filter((feature) => !device.features.has(feature));
  if (missing.length) {
    throw new Error(
      `kernel ${KERNEL.name} needs the device features [${missing}]: request them in requestDevice({requiredFeatures})`,
    );
  }
  const layout = device.createBindGroupLayout({ label: KERNEL.name, entries: bindGroupLayout });
  const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [layout] });
  const pipelines = new Map(); // false: the normal variant, true: the folded one

  async function pipeline(folded) {
    if (!pipelines.has(folded)) {
      const code = folded ? wgslFolded : wgsl;
      const module = device.createShaderModule({ label: KERNEL.name, code });
      const made = device.createComputePipelineAsync({
        label: KERNEL.name,
        layout: pipelineLayout,
        compute: { module, entryPoint: KERNEL.entryPoint },
      });
      pipelines.set(folded, made);
    }
    return pipelines.get(folded);
  }
  await pipeline(false);
  const maxWorkgroups = device.limits.maxComputeWorkgroupsPerDimension;

  /**
   * Run the kernel. `args` has every parameter by name; `launch` is {threads} or
   * {workgroups} (an integer or [x, y, z]), and optionally `printCapacity` (the lines a
   * kernel that prints can write per dispatch; default 1024, as tx.options.print_capacity),
   * `print` (a function taking the printed text, as pyshader_tx's Python runtime shows it;
   * default: console.log), `maxWorkgroupsPerDimension` (below the device's: folding tests).
   * Resolves to {name: TypedArray} for each array the kernel writes that was passed as a
   * typed array (updated in place, as in Python); written GPUBuffers are not read back.
   */
  async function dispatch(args, launch = {}) {
    if (args === null || typeof args !== 'object')
      throw new TypeError(`${KERNEL.name}: dispatch takes an object of arguments`);
    const unknown = Object.keys(args).filter((name) => !KERNEL.parameters.includes(name));
    if (unknown.length)
      throw new TypeError(
        `${KERNEL.name} has no parameter '${unknown[0]}'; its parameters: ${KERNEL.parameters.join(', ')}`,
      );
    const absent = KERNEL.parameters.filter((name) => !(name in args));
    if (absent.length) throw new TypeError(`${KERNEL.name}: missing argument '${absent[0]}'`);
    const limit = Math.min(maxWorkgroups, launch.maxWorkgroupsPerDimension ?? maxWorkgroups);
    const arrays = KERNEL.arrays.map((param) => arrayArgument(param, args[param.name]));
    const shapes = Object.fromEntries(arrays.map((a) => [a.param.name, a.shape]));
    const uniformData = uniformLayout ? packUniforms(args, shapes) : null;
    const printCapacity = launch.printCapacity ?? KERNEL.prints?.defaultCapacity;
    if (KERNEL.prints && !(Number.isInteger(printCapacity) && printCapacity >= 1)) {
      throw new RangeError(
        `${KERNEL.name}: printCapacity must be a positive integer, got ${printCapacity}`,
      );
    }
    const shape = computeDispatch(launch, limit);
    const result = {};
    if (shape === null) return result;

    const temporary = [];
    const entries = [];
    const makeBuffer = (size, usage, label) => {
      const buffer = device.createBuffer({ label: `${KERNEL.name}.${label}`, size, usage });
      temporary.push(buffer);
      return buffer;
    };
    try {
      for (const array of arrays) {
        let buffer = array.buffer;
        if (buffer === null) {
          const bytes = storageBytes(array.param.element, array.data, array.size);
          buffer = makeBuffer(
            bytes.length,
            USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST,
            array.param.name,
          );
          device.queue.writeBuffer(buffer, 0, bytes);
        }
        entries.push({
          binding: array.param.binding,
          resource: { buffer, size: array.size },
        });
        array.bound = buffer;
      }
      if (uniformData !== null) {
        const buffer = makeBuffer(uniformData.length, USAGE.UNIFORM | USAGE.COPY_DST, 'params');
        device.queue.writeBuffer(buffer, 0, uniformData);
        entries.push({ binding: uniformLayout.binding, resource: { buffer } });
      }
      let printBuffer = null;
      if (KERNEL.prints) {
        const { headerWords, recordWords } = KERNEL.prints;
        const size = 4 * (headerWords + printCapacity * recordWords);
        printBuffer = makeBuffer(size, USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST, 'prints');
        entries.push({ binding: KERNEL.prints.binding, resource: { buffer: printBuffer } });
      }
      const bindGroup = device.createBindGroup({ label: KERNEL.name, layout, entries });
      const encoder = device.createCommandEncoder({ label: KERNEL.name });
      const pass = encoder.beginComputePass({ label: KERNEL.name });
      pass.setPipeline(await pipeline(shape.folded));
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(...shape.groups);
      pass.end();
      const readbacks = [];
      const readBack = (source, size, done) => {
        const staging = makeBuffer(size, USAGE.MAP_READ | USAGE.COPY_DST, 'readback');
        encoder.copyBufferToBuffer(source, 0, staging, 0, size);
        readbacks.push([staging, done]);
      };
      for (const array of arrays) {
        if (array.param.written && array.data !== null) {
          readBack(array.bound, array.size, (bytes) => {
            readInto(array.param.element, bytes, array.data);
            result[array.param.name] = array.data;
          });
        }
      }
      if (printBuffer !== null) {
        readBack(printBuffer, printBuffer.size, (bytes) => {
          const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
          const text = printedText(words, printCapacity);
          if (text) (launch.print ?? ((shown) => console.log(shown.replace(/\n$/, ''))))(text);
        });
      }
      device.queue.submit([encoder.finish()]);
      await Promise.all(
        readbacks.map(async ([staging, done]) => {
          await staging.mapAsync(MAP_READ);
          done(new Uint8Array(staging.getMappedRange()));
          staging.unmap();
        }),
      );
      return result;
    } finally {
      for (const buffer of temporary) buffer.destroy();
    }
  }

  return {
    dispatch,
    /** The uniform block's bytes for `args` (as the Python launcher packs them). */
    packUniforms(args) {
      if (!uniformLayout) return new Uint8Array(0);
      const shapes = Object.fromEntries(
        KERNEL.arrays.map((p) => [p.name, arrayArgument(p, args[p.name]).shape]),
      );
      return packUniforms(args, shapes);
    },
    bindGroupLayout: layout,
    pipeline: () => pipeline(false),
  };
}

