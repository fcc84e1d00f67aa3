// ESLint's settings for the page's JavaScript (ui/js/*.js): browser scripts, concatenated into the one function
// ui/page_script.py hands to Gradio, each declaring one `install…` function (`/* exported */` names it).
const js = require("@eslint/js");

const BROWSER = [
  "atob", "console", "CustomEvent", "document", "Element", "Event", "FocusEvent", "getComputedStyle", "MutationObserver", "navigator", "Promise", "ResizeObserver",
  "requestAnimationFrame", "setTimeout", "clearTimeout", "structuredClone", "window",
].reduce((globals, name) => ({...globals, [name]: "readonly"}), {});

module.exports = [
  js.configs.recommended,
  {
    files: ["ui/**/*.js"],
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
