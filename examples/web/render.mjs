// Renders the Mandelbrot set with the gallery's kernel (examples/mandelbrot.py), through the
// ES module that `pyshader-tx --target js` writes for it (./mandelbrot.js). Used by the page
// (index.html) and by the headless run on dawn.node (headless.mjs).

import { createKernel, features } from './mandelbrot.js';

export { features };

/** The kernel's `origin` and `step` for a picture `span` wide around `center` (the same
 * numbers as `view` in examples/mandelbrot.py; the module rounds them to f32). */
export function view(width, height, center, span) {
  const step = span / width;
  const origin = [center[0] - ((width - 1) / 2) * step, center[1] + ((height - 1) / 2) * step];
  return { origin, step };
}

const kernels = new WeakMap(); // device -> the kernel made on it

/**
 * Run the kernel for a `width` x `height` picture; resolves to the escape counts, the
 * smooth counts and the RGBA8 pixels (one u32 each, R in the low byte: ImageData's order).
 */
export async function render(device, { width, height, center, span, iterations }) {
  if (!kernels.has(device)) kernels.set(device, createKernel(device));
  const kernel = await kernels.get(device);
  const { origin, step } = view(width, height, center, span);
  const shape = [height, width];
  const counts = new Uint32Array(width * height);
  const smooth = new Float32Array(width * height);
  const image = new Uint32Array(width * height);
  await kernel.dispatch(
    {
      origin,
      step,
      max_iterations: iterations,
      counts: { data: counts, shape },
      smooth: { data: smooth, shape },
      image: { data: image, shape },
    },
    { threads: [width, height] },
  );
  return { counts, smooth, image };
}
