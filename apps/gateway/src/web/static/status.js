// The /status page: draws the latency charts with uPlot from the page's own series data
// (#series-data, the /status/series document the server rendered), and refreshes itself by
// fetching the page again and swapping #status-live. Each chart's container gets the numbers
// it plotted in data-plotted ([[t...], [p50...], [p99...]]), so they can be checked. The time axis
// starts one minute before the first measured minute: two minutes of data fill the chart, not a
// sliver of an hour-wide axis.
(() => {
  const live = () => document.getElementById('status-live');
  const charts = [];
  const HEIGHT = 200;

  function readSeries() {
    const el = document.getElementById('series-data');
    try {
      return el ? JSON.parse(el.textContent || 'null') : null;
    } catch {
      return null;
    }
  }

  function draw() {
    while (charts.length) charts.pop().destroy();
    const doc = readSeries();
    if (!doc || typeof uPlot === 'undefined') return;
    for (const s of doc.capabilities) {
      const el = document.querySelector(`[data-chart="${CSS.escape(s.id)}"]`);
      if (!el) continue;
      // the axis fits the data there is: from the minute before the first measured one (not the whole hour)
      const first = s.points.findIndex((p) => p.samples > 0);
      const points = first < 0 ? s.points : s.points.slice(Math.max(0, first - 1));
      const data = [points.map((p) => p.t), points.map((p) => p.p50), points.map((p) => p.p99)];
      const u = new uPlot(
        {
          width: Math.max(200, el.clientWidth),
          height: HEIGHT,
          legend: { show: false },
          cursor: { show: true, points: { show: false } },
          tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
          // a single minute still gets a readable span: one minute on either side
          scales: {
            x: { time: true, range: (_u, min, max) => (max - min < 120 ? [min - 60, max + 60] : [min, max]) },
            y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.15 : 1] },
          },
          series: [
            {},
            { label: 'p50 (ms)', stroke: '#0b57d0', width: 2, points: { show: true, size: 5, fill: '#0b57d0' } },
            { label: 'p99 (ms)', stroke: '#b3261e', width: 2, dash: [6, 4], points: { show: true, size: 5, fill: '#b3261e' } },
          ],
          axes: [{ stroke: '#1b1b1f' }, { stroke: '#1b1b1f', size: 56, values: (_u, ticks) => ticks.map((v) => `${v} ms`) }],
        },
        data,
        el,
      );
      el.dataset.plotted = JSON.stringify(u.data);
      charts.push(u);
    }
  }

  function resize() {
    for (const u of charts) {
      const el = u.root.parentElement;
      if (el) u.setSize({ width: Math.max(200, el.clientWidth), height: HEIGHT });
    }
  }

  async function refresh() {
    const current = live();
    if (!current) return;
    try {
      const res = await fetch(location.pathname + location.search, { headers: { Accept: 'text/html' }, cache: 'no-store' });
      if (!res.ok) return;
      const next = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('status-live');
      if (!next) return;
      // keep the data tables the reader opened
      const open = new Set(Array.from(current.querySelectorAll('details[open] [data-series-table]')).map((t) => t.getAttribute('data-series-table')));
      for (const name of current.getAttributeNames()) current.removeAttribute(name);
      for (const name of next.getAttributeNames()) current.setAttribute(name, next.getAttribute(name) ?? '');
      current.replaceChildren(...Array.from(next.childNodes).map((n) => document.importNode(n, true)));
      for (const t of current.querySelectorAll('[data-series-table]'))
        if (open.has(t.getAttribute('data-series-table'))) t.closest('details')?.setAttribute('open', '');
      draw();
      document.documentElement.dataset.refreshes = String(Number(document.documentElement.dataset.refreshes || '0') + 1);
    } catch {
      // offline or the gateway restarting: the next round tries again
    }
  }

  draw();
  window.addEventListener('resize', resize);
  const seconds = Number(live()?.dataset.refreshSeconds || '15');
  setInterval(refresh, Math.max(2, seconds) * 1000);
})();
