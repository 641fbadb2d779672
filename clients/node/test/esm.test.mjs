// SPDX-License-Identifier: Apache-2.0
// The package is importable from an ES module with named exports (index.js is CommonJS).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createRequire } from 'node:module';
import * as esm from '../index.js';

it('every export is a named export of the ES module', () => {
  const cjs = createRequire(import.meta.url)('../index.js');
  for (const name of Object.keys(cjs)) assert.equal(esm[name], cjs[name], name);
  assert.equal(esm.PROTOCOL_VERSION, 1);
});
