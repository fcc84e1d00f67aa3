/* Where the page scrolls after Translate and a tour stop, and text typed before the start-up example arrives
(loaded by ui/page_script.py; `SHOW_VIEW_JS`, `SHOW_TOUR_JS` and `KEEP_TYPED_JS` there call it).

After Translate on a wide screen the page stays where the sentence is: the sentence, its translation, the player
bar and the figure share one screen. On a phone, where they cannot, the figure's title comes up right under the
(sticky) player bar. A tour stop brings its text under the bar.
*/
/* exported installScroll */

// After an Explain panel's run: bring its result box (`id`) just into view once it is drawn, and follow it while it
// settles, until the visitor scrolls or 1.5 s have passed.
function followResult(id) {
  const FOLLOW_MS = 1500;
  const box = document.getElementById(id);
  if (!box) return;
  // the result: a drawn figure, or text other than the run's progress (Gradio's status tracker) and the box's
  // label (an empty figure's box holds its name for screen readers)
  const ASIDE = '[data-testid=status-tracker], label, .sr-only';
  const written = () => Array.from(box.querySelectorAll(`*:not(${ASIDE}):not(:is(${ASIDE}) *)`))
    .some((node) => Array.from(node.childNodes).some((child) => child.nodeType === 3 && child.textContent.trim()));
  const drawn = () => box.querySelector('.js-plotly-plot .main-svg') || written();
  let settle = null, following = null;
  const events = ['wheel', 'touchmove', 'keydown', 'pointerdown'];
  const stop = () => {
    watcher.disconnect(); clearTimeout(settle); clearTimeout(giveUp); clearTimeout(following);
    events.forEach((name) => document.removeEventListener(name, stop, true));
  };
  const show = () => {
    if (!drawn() || box.querySelector('.wrap.pending, .wrap.generating')) return;
    if (following === null) following = setTimeout(stop, FOLLOW_MS);
    const bar = document.getElementById('player-bar');
    box.style.scrollMarginTop = `${(bar ? bar.getBoundingClientRect().height : 0) + 8}px`;
    box.scrollIntoView({block: 'nearest', behavior: 'instant'});
  };
  const watcher = new MutationObserver(() => { clearTimeout(settle); settle = setTimeout(show, 150); });
  // a class too: a fast run's last change can be its progress wrap turning from pending to done
  watcher.observe(box, {childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['class']});
  const giveUp = setTimeout(stop, 120000);
  setTimeout(() => events.forEach((name) => document.addEventListener(name, stop, true)), 0);  // after this click
}


function installScroll(phonePx) {
  // after Translate: a wide screen shows the page's head (sentence, translation, player bar and figure share the
  // window); a phone brings the open figure's title right under the (sticky) player bar, and again once that figure
  // has been redrawn for the new sentence (the bar's height changes with the step line). A tour stop brings its text
  // under the bar, a comparison opened its sentence. Each bring-up counts in <body data-shown-view> (what tests wait on, never on scroll timing).
  const NARROW_PX = phonePx;  // a window narrower than this is a phone
  const bar = () => document.getElementById('player-bar');
  const pageTop = (element) => element.getBoundingClientRect().top + window.scrollY;
  const openFigure = () => Array.from(document.querySelectorAll('#views .block[id$="-plot"]'))
    .find((block) => block.offsetParent !== null);
  let shown = 0, following = null;  // following: the figure whose next drawing brings it up again
  const bringUp = (anchorId) => {
    const playerBar = bar();
    let anchor = document.getElementById(anchorId);
    if (anchorId === 'views') anchor = window.innerWidth >= NARROW_PX ? null : openFigure();
    const height = playerBar ? playerBar.getBoundingClientRect().height : 0;
    const target = anchor ? pageTop(anchor) - height : 0;  // the anchor right under the bar, or the page's head
    window.scrollTo({top: Math.max(target, 0), behavior: 'instant'});
    document.body.dataset.shownView = String(++shown);
    return anchor;
  };
  document.addEventListener('figure-drawn', (event) => {
    if (following && following.contains(event.target)) { following = null; bringUp('views'); }
  });
  // the visitor's own scrolling ends the follow
  ['wheel', 'touchmove', 'keydown', 'pointerdown'].forEach((name) => document.addEventListener(name, () => { following = null; }, true));
  const later = (action) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(action, 30)));
  // text typed before the start-up example has arrived is kept (the example would replace it)
  let typed = null, loaded = false;
  document.addEventListener('input', (event) => {
    if (!loaded && event.target instanceof Element && event.target.closest('#source')) typed = event.target.value;
  }, true);
  window.attentionExplorer = {
    showView: () => later(() => { following = bringUp('views'); }),
    showTour: () => later(() => bringUp('tour-row')),
    // a comparison opened: its sentence and both figures under the bar (a phone: the first figure's caption)
    showCompare: () => later(() => bringUp(window.innerWidth >= NARROW_PX ? 'compare-message' : 'compare-caption-1')),
    keepTyped: (value) => { loaded = true; return typed === null ? value : typed; },
    followResult,
  };
}
