import { SIMILARITY_KERNEL } from './similarity-kernel-bytes.js';

/** What is used of the WebAssembly API (the compiler settings here carry no DOM types). */
type WasmModule = object;
type WasmMemory = {
  readonly buffer: ArrayBuffer;
  grow: (pages: number) => number;
};
type DotRows = (
  query: number,
  matrix: number,
  rows: number,
  dimensions: number,
  out: number,
) => void;
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => WasmModule;
      Instance: new (
        module: WasmModule,
        imports: object,
      ) => { exports: { memory: WasmMemory; dotRows: DotRows } };
    };
  }
).WebAssembly;

let compiled: WasmModule | undefined;

/** The kernel (similarity-kernel.wat), compiled once per process. */
function kernelModule(): WasmModule {
  compiled ??= new wasm.Module(
    Uint8Array.from(atob(SIMILARITY_KERNEL), (char) => char.charCodeAt(0)),
  );
  return compiled;
}

const PAGE = 65_536;

/** A query's integer products with every row, and what turns them back into dot products. */
export type RowProducts = {
  /** Per row, the integer product of the quantized query and row. */
  products: Int32Array;
  /** A query component is about `queryScale` times its integer. */
  queryScale: number;
  /** The sum of the quantized query's absolute integers. */
  querySum: number;
};

/**
 * Rows of one dimension quantized to 8 bits (a row's largest absolute value becomes
 * 127), for a pass that gives every row's dot product with a query, within a bound,
 * from a quarter of the float32 memory: a WebAssembly SIMD kernel multiplies 32
 * components a step. Each row keeps its scale and the sum of its absolute integers, so
 * the error of each product is known (see {@link productBound}).
 */
export class QuantizedRows {
  readonly dimensions: number;
  readonly size: number;
  /** Per row: its largest absolute value / 127 (0: no row, or all zeros). */
  readonly scales: Float64Array;
  /** Per row: the sum of its quantized components' absolute values. */
  readonly sums: Float64Array;
  readonly #padded: number;
  readonly #memory: WasmMemory;
  readonly #dotRows: DotRows;
  readonly #queryAt = 0;
  readonly #productsAt: number;
  readonly #matrixAt: number;
  /** The largest integer a query component becomes: no int32 sum can overflow. */
  readonly #queryRange: number;

  constructor(options: { size: number; dimensions: number }) {
    const { size, dimensions } = options;
    this.size = size;
    this.dimensions = dimensions;
    this.#padded = Math.ceil(dimensions / 32) * 32;
    this.scales = new Float64Array(size);
    this.sums = new Float64Array(size);
    this.#productsAt = align(this.#padded * 2);
    this.#matrixAt = align(this.#productsAt + size * 4);
    const bytes = this.#matrixAt + size * this.#padded;
    const instance = new wasm.Instance(kernelModule(), {});
    this.#memory = instance.exports.memory;
    const pages =
      Math.ceil(bytes / PAGE) - this.#memory.buffer.byteLength / PAGE;
    if (pages > 0) this.#memory.grow(pages);
    this.#dotRows = instance.exports.dotRows;
    this.#queryRange = Math.max(
      1,
      Math.min(32_767, Math.floor((2 ** 31 - 1) / (127 * this.#padded))),
    );
  }

  /** Quantizes `values` (finite, of `dimensions`) into row `row`. */
  setRow(row: number, values: Float32Array): void {
    let largest = 0;
    for (let dimension = 0; dimension < this.dimensions; dimension += 1)
      largest = Math.max(largest, Math.abs(values[dimension] as number));
    const scale = largest / 127;
    const target = new Int8Array(
      this.#memory.buffer,
      this.#matrixAt + row * this.#padded,
      this.dimensions,
    );
    let sum = 0;
    if (scale > 0)
      for (let dimension = 0; dimension < this.dimensions; dimension += 1) {
        const quantized = Math.round((values[dimension] as number) / scale);
        target[dimension] = quantized;
        sum += Math.abs(quantized);
      }
    this.scales[row] = scale;
    this.sums[row] = sum;
  }

  /** The quantized query's integer product with every row (one pass of the kernel). */
  products(query: Float32Array): RowProducts {
    let largest = 0;
    for (let dimension = 0; dimension < this.dimensions; dimension += 1)
      largest = Math.max(largest, Math.abs(query[dimension] as number));
    const queryScale = largest / this.#queryRange;
    const target = new Int16Array(
      this.#memory.buffer,
      this.#queryAt,
      this.#padded,
    );
    let querySum = 0;
    for (let dimension = 0; dimension < this.dimensions; dimension += 1) {
      const quantized =
        queryScale > 0
          ? Math.round((query[dimension] as number) / queryScale)
          : 0;
      target[dimension] = quantized;
      querySum += Math.abs(quantized);
    }
    this.#dotRows(
      this.#queryAt,
      this.#matrixAt,
      this.size,
      this.#padded,
      this.#productsAt,
    );
    return {
      products: new Int32Array(
        this.#memory.buffer,
        this.#productsAt,
        this.size,
      ),
      queryScale,
      querySum,
    };
  }

  /**
   * How far row `row`'s dot product with the query may be from `queryScale * scale *
   * product`: each side's rounding is at most half its scale per component, so the error
   * is at most `scale * queryScale / 2 * (querySum + rowSum + dimensions / 2)`; plus what
   * summing in doubles may lose.
   */
  productBound(row: number, products: RowProducts): number {
    const scale = this.scales[row] as number;
    const { queryScale, querySum } = products;
    const rounding =
      0.5 *
      scale *
      queryScale *
      (querySum + (this.sums[row] as number) + this.dimensions / 2);
    // Doubles: at most dimensions x 2^-52 of |q| |t| each way; |t| <= 127 scale sqrt(d).
    const summing =
      this.dimensions *
      2 ** -48 *
      127 *
      scale *
      Math.sqrt(this.dimensions) *
      (queryScale * this.#queryRange * Math.sqrt(this.dimensions));
    return rounding + summing;
  }
}

/** The tools' vectors of one catalog state and dimension: exact rows by position (`undefined`: none usable), and quantized. */
export type VectorMatrix = {
  rows: (Float32Array | undefined)[];
  /** The rows one after another (a row without a vector holds zeros). */
  exact: Float32Array;
  quantized: QuantizedRows;
};

const align = (offset: number): number => Math.ceil(offset / 16) * 16;
