// The gateway serves the bundle under /console/ (gateway/console_files.c);
// JSX through esbuild's automatic runtime, so Preact needs no Vite plugin.
export default {
  base: '/console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: { outDir: 'dist', sourcemap: true },
};
