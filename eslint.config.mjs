import nextCoreWebVitals from 'eslint-config-next/core-web-vitals';
import nextTypescript from 'eslint-config-next/typescript';
import { ISOLATED_TEST_FILES } from './tests/isolated-files.mjs';

const config = [
  ...nextCoreWebVitals,
  ...nextTypescript,
  {
    ignores: ['.next/**', '.next-*/**', '.vercel/**', 'scripts/bench/next-floor/.next*/**', 'node_modules/**', '.data/**', 'db/migrations/**', 'next-env.d.ts', 'test-results/**', 'playwright-report/**', 'bench-results/**'],
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The app reaches tRPC and trpc-to-openapi through their public APIs only (issue 33): a
    // minor upgrade may change their internals without a type error.
    files: ['server/**/*.ts', 'app/**/*.ts', 'app/**/*.tsx', 'db/**/*.ts', 'lib/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[property.name='_def']", message: "tRPC's internals (`_def`): use the public caller (createCallerFactory) or the procedure's own options." },
      ],
    },
  },
  {
    // The shared vitest project keeps modules between files: a mock there would not take
    // where another file imported the module first, and would leak into the next file.
    files: ['tests/**/*.ts'],
    ignores: [...ISOLATED_TEST_FILES, 'tests/helpers/prism-setup.ts', 'tests/cluster/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'vi', property: 'mock', message: 'A test file that mocks a module runs isolated: list it in tests/isolated-files.mjs.' },
        { object: 'vi', property: 'doMock', message: 'A test file that mocks a module runs isolated: list it in tests/isolated-files.mjs.' },
      ],
    },
  },
];

export default config;
