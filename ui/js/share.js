/* The share link's copy button (loaded by ui/page_script.py; `COPY_LINK_JS` there calls it): the button says what
happened, copied, or (no clipboard, e.g. an http page on another machine) the link selected.
*/
/* exported installShare */

function copyLink(url) {
  const button = document.getElementById('share-copy');
  const say = (text) => { if (!button) return; const label = button.dataset.label || button.textContent;
    button.dataset.label = label; button.textContent = text;
    clearTimeout(button.__reset); button.__reset = setTimeout(() => { button.textContent = label; }, 2500); };
  const select = () => { const box = document.querySelector('#share-link textarea, #share-link input');
    if (box) { box.focus(); box.select(); } say('Selected: press Ctrl+C'); };
  if (!url) { say('Translate first'); return url; }
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(url).then(() => say('Copied ✓'), select);
  } else { select(); }
  return url;
}

function installShare() {
  window.attentionExplorer = Object.assign(window.attentionExplorer || {}, {copyLink});
}
