// Prettier: the layout the code already had (issue 11). Measured on the sources before adopting it:
// no semicolons, single quotes, two-space indent, `(x) =>`, `{ a }`, and long lines (the median
// file's longest line was 145 characters), hence 150 rather than Prettier's 80.
/** @type {import('prettier').Config} */
export default {
  printWidth: 150,
  semi: false,
  singleQuote: true,
  trailingComma: 'all',
}
