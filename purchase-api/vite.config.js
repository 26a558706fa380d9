// The sales page (src/main/frontend) built into target/classes/static/sales, so that it is in
// purchase-api's jar and served at /sales/; run by Maven (pom.xml, exec-maven-plugin) or by hand:
// npm ci && npm run build. Its unit tests: npm test (Vitest).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('src/main/frontend'),
  // Relative asset addresses: the page works wherever the platform is mounted.
  base: './',
  build: {
    outDir: here('target/classes/static/sales'),
    emptyOutDir: true,
    // Every asset a file of its own: the page's Content-Security-Policy allows no data: URLs.
    assetsInlineLimit: 0,
    target: 'es2022',
  },
  test: {
    root: here('.'),
    include: ['src/test/frontend/**/*.test.js'],
    environment: 'node',
  },
});
