// ESLint's settings for the page's JavaScript (ui/js/*.js): browser scripts, concatenated into the one function
// ui/page_script.py hands to Gradio, each declaring one `install…` function (`/* exported */` names it); and the
// lesson page's player (lesson/player.js, a plain browser script). Plotly's vendored bundle is not ours to lint.
const js = require("@eslint/js");

const BROWSER = [
  "atob", "Blob", "console", "CustomEvent", "DecompressionStream", "document", "Element", "Event", "FocusEvent", "getComputedStyle", "MutationObserver", "navigator", "Option", "performance", "Promise", "ResizeObserver", "Response",
  "requestAnimationFrame", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "structuredClone", "URLSearchParams", "window",
].reduce((globals, name) => ({...globals, [name]: "readonly"}), {});

module.exports = [
  {ignores: ["lesson/vendor/**"]},
  js.configs.recommended,
  {
    files: ["ui/**/*.js", "lesson/**/*.js"],
    languageOptions: {ecmaVersion: 2022, sourceType: "script", globals: BROWSER},
    rules: {
      "no-unused-vars": ["error", {args: "after-used", argsIgnorePattern: "^_", ignoreRestSiblings: true}],
      "prefer-const": "error",
      "no-var": "error",
      eqeqeq: ["error", "always"],
    },
  },
  {
    files: ["eslint.config.js"],
    languageOptions: {sourceType: "commonjs", globals: {require: "readonly", module: "writable"}},
  },
];
