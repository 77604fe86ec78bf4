// The dashboard builds to static files that the API serves under /dashboard (DECISIONS §10).
import { defineConfig } from 'vite';

export const config = defineConfig({
  base: '/dashboard/',
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, target: 'es2022', modulePreload: { polyfill: false } },
});

// Vite loads its config by default export.
// eslint-disable-next-line no-restricted-syntax
export default config;
