// ESLint flat config: the house style that a tool can check (issue 11). Layout is Prettier's job
// (eslint-config-prettier turns off every rule that would argue with it). typescript-eslint's
// `recommended` is the syntactic preset, not the type-checked one: it keeps `npm run lint` fast on
// small machines, and `tsc --noEmit` already checks the types.
import js from '@eslint/js'
import { defineConfig } from 'eslint/config'
import prettier from 'eslint-config-prettier'
import simpleImportSort from 'eslint-plugin-simple-import-sort'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default defineConfig(
  {
    ignores: ['dist/', 'node_modules/', '.chatferry/', 'chatferry-reports/', 'test-artifacts/', 'coverage/'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Unused on purpose only when it says so: `_`-prefixed, the rest-sibling idiom included
      // (`const { file: _file, ...rest } = config`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
        },
      ],
      // A relative import must name the file (Node runs the sources by type stripping): tsc's
      // nodenext resolution already refuses one without its extension, so no lint rule repeats it.
      // One import statement per module and kind (a value import and an `import type` may stand apart).
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
      // One order, kept by --fix, so imports are never a review topic or a merge conflict.
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
    },
  },
  {
    // Kysely's documented idiom: a migration sees the database as `Kysely<any>`, never as today's schema types.
    files: ['**/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read raw JSON answers and poke at payloads; typing each one would add nothing a test needs.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // Layering is checked by test/unit/repo/import-directions.test.ts, which owns the folder table (README "Folders").
  prettier,
  // After eslint-config-prettier, which turns `curly` off: braces around every block body.
  { rules: { curly: 'error' } },
)
