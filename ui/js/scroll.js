/* Where the page scrolls after Translate and a tour stop, and text typed before the start-up example arrives
(loaded by ui/page_script.py; `SHOW_VIEW_JS`, `SHOW_TOUR_JS` and `KEEP_TYPED_JS` there call it).

After Translate on a wide screen the page stays where the sentence is: the sentence, its translation, the player
bar and the figure share one screen. On a phone, where they cannot, the figure's title comes up right under the
(sticky) player bar. A tour stop brings its text under the bar.
*/
/* exported installScroll */

function installScroll() {
  // after Translate / a tour stop: the player bar at the top of the window, the view (or the stop's text) under it
  const bar = () => document.getElementById('player-bar');
  const pageTop = (element) => element.getBoundingClientRect().top + window.scrollY;
  const openFigure = () => Array.from(document.querySelectorAll('#views .block[id$="-plot"]'))
    .find((block) => block.offsetParent !== null);
  const bringUp = (anchorId) => {
    const anchor = document.getElementById(anchorId), playerBar = bar();
    if (!anchor || !playerBar) return;
    const height = playerBar.getBoundingClientRect().height;
    let target = pageTop(anchor) - height;  // the anchor right under the (sticky) bar
    if (anchorId === 'views') {
      const figure = openFigure();
      // a phone: the controls would fill the window, so the figure itself comes up under the bar
      if (figure && pageTop(figure) - height - target > window.innerHeight * 0.45 - height) {
        target = pageTop(figure) - height - 8;
      }
    }
    window.scrollTo({top: Math.max(target, 0), behavior: 'instant'});
  };
  const later = (action) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(action, 30)));
  // text typed before the start-up example has arrived is kept (the example would replace it)
  let typed = null, loaded = false;
  document.addEventListener('input', (event) => {
    if (!loaded && event.target instanceof Element && event.target.closest('#source')) typed = event.target.value;
  }, true);
  window.attentionExplorer = {
    showView: () => later(() => bringUp('views')),
    showTour: () => later(() => bringUp('tour-row')),
    keepTyped: (value) => { loaded = true; return typed === null ? value : typed; },
  };
}
