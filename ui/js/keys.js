/* The page-wide step keys and the player bar's token strip (loaded by ui/page_script.py).

Keys: Left/Right = Back/Next, Home/End = First/Last, Space = Play/Pause (whatever has the focus, a checkbox
or a choice aside: Space ticks or picks it). They click the step buttons (so they do
exactly what a click does) and never fire while typing in a text box or on a slider, with a modifier held, or
while the buttons are disabled (no trace yet). After Enter in the sentence box they step until the visitor types
or clicks there again; on a radio (a head, a layer, a kind) they step instead of moving the choice; a click on a
tab leaves the focus on the page, so they step after it too. The strip keeps the current token in view.
*/
/* exported installKeys */

// The step rule, written once: (move, step, last) -> the step a button moves to, within 1..last.
function stepAfter(move, step, last) {
  const rules = {first: 1, prev: step - 1, next: step + 1, last};
  return Math.min(Math.max(rules[move], 1), last);
}

// A step button: the slider moves at once in the browser and sends its own input event (the one action that draws
// a step, ui/stepping.py), so quick presses add up; a disabled slider (no trace, a one-step trace) stays.
function moveStep(move) {
  const range = document.querySelector('#step input[type=range]');
  if (!range || range.disabled) return;
  const step = Number(range.value) || 1;
  const next = stepAfter(move, step, Number(range.max) || 1);
  if (next === step) return;
  range.value = String(next);
  range.dispatchEvent(new Event('input', {bubbles: true}));
}

function installKeys(keys) {
  window.attentionExplorer = Object.assign(window.attentionExplorer || {}, {moveStep});
  // the sentence box after Enter: the keys step there until the visitor types or clicks in it again
  let armed = null;
  document.addEventListener('keydown', (event) => {
    const box = event.target instanceof Element && event.target.closest('#source') ? event.target : null;
    if (box && event.key === 'Enter' && !event.shiftKey) armed = box;
  }, true);
  document.addEventListener('input', (event) => { if (event.target === armed) armed = null; }, true);
  document.addEventListener('pointerdown', (event) => { if (event.target === armed) armed = null; }, true);
  // a click on a tab (the views' or the Explain panels') leaves the focus on the page: the keys step after it
  document.addEventListener('click', (event) => {
    const tab = event.target instanceof Element && event.target.closest('[role="tab"]');
    if (tab && event.detail > 0) setTimeout(() => { if (document.activeElement === tab) tab.blur(); }, 0);
  }, true);
  // the step line's prefix strip scrolls to keep the current token (the query) in view
  const showQuery = () => {
    const strip = document.querySelector('#step-info .step-prefix');
    const token = strip && strip.querySelector('.tok.query');
    if (!token) return;
    const left = token.getBoundingClientRect().left - strip.getBoundingClientRect().left + strip.scrollLeft;
    const right = left + token.getBoundingClientRect().width;
    if (right > strip.scrollLeft + strip.clientWidth) strip.scrollLeft = right - strip.clientWidth + 4;
    else if (left < strip.scrollLeft) strip.scrollLeft = Math.max(left - 4, 0);
  };
  new MutationObserver(showQuery).observe(document.getElementById('step-info') || document.body,
                                         {childList: true, subtree: true, characterData: true});
  window.addEventListener('resize', showQuery);
  let spaceTaken = false;  // this Space's press played: its release is not a button's click
  const TYPING = 'textarea, select, [contenteditable=""], [contenteditable="true"], ' +
                 'input:not([type=radio]):not([type=checkbox])';
  document.addEventListener('keydown', (event) => {
    const id = keys[event.key];
    if (!id || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const target = event.target instanceof Element ? event.target : null;
    if (target && target !== armed && target.closest(TYPING)) return;
    // Space plays whatever has the focus (a step button just clicked, a tab), except a checkbox it ticks and a
    // choice (a radio: a head, a layer, a kind) it picks
    if (event.key === ' ' && target && target.closest('input[type=checkbox], input[type=radio]')) return;
    const button = document.getElementById(id);
    if (!button || button.disabled) return;
    event.preventDefault();
    if (event.key === ' ') spaceTaken = true;
    button.click();
  });
  // a menu left with Tab closes, as with Escape (Gradio's list stayed open over the page, deaf to clicks elsewhere):
  // once the Tab is handled, its input gets the blur that closes it
  document.addEventListener('keydown', (event) => {
    const menu = event.key === 'Tab' && event.target instanceof Element && event.target.closest('input[role=combobox]');
    if (menu) setTimeout(() => { if (document.activeElement !== menu) menu.dispatchEvent(new FocusEvent('blur')); }, 0);
  }, true);
  // a focused button would also take the Space on its release (a second click): the release is ours too
  document.addEventListener('keyup', (event) => {
    if (event.key === ' ' && spaceTaken) { spaceTaken = false; event.preventDefault(); }
  }, true);
}
