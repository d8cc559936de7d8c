/** tests/isolated-files.mjs: the test files that run isolated (plain JavaScript, read by eslint.config.mjs too). */
export declare const ISOLATED_TEST_FILES: string[];
