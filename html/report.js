/*
 * alloctrace report page: draws the JSON blob (#alloctrace-data) that
 * alloctrace's HTML exporter writes. No dependencies, no network.
 *
 * The blob (see user/html.c):
 *   start, interval       when tracing began (unix s), seconds between reports
 *   reports               how many reports the run made
 *   series                [[time, outstanding_bytes, outstanding_allocs,
 *                           rss_bytes|null], ...], one per report (thinned
 *                           to one in series_stride on long runs)
 *   report                the last report, as --format json writes it
 *                         (docs/formats.md), or null; an optional
 *                         report.threads = [{tid, comm, stacks: [...]}]
 *                         (stacks as in report.stacks) adds a thread picker;
 *                         a report on several processes (report.processes)
 *                         is drawn as one whose stacks end in their process
 *   big_allocs            the big_alloc objects kept; big_allocs_seen counts
 *                         them all
 *
 * A --growth report (report.growth) counts resident pages by the stack
 * that first touched them, not blocks: every label says so (UNITS). A
 * --leak-check report (report.leak_check) adds valgrind's classes to the
 * summary and the leakers, and a flame graph of definitely lost bytes.
 *
 * Everything from the target (names, paths) goes into the page as text
 * nodes or attribute values, never as markup.
 *
 * When drawing is done, <html> gets data-ready="true" (data-error on a
 * failure): the integration test waits for it.
 */
(function () {
	'use strict';

	const SVG_NS = 'http://www.w3.org/2000/svg';
	const ROW = 18;			/* flame graph box height, px */
	const MONO_FONT = '11px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace';
	const TABLE_ROWS = 20;		/* rows shown before "show all" */
	/*
	 * What the numbers of a report count: blocks the allocator handed out,
	 * or with --growth the pages still resident, by the stack that first
	 * touched each (page faults).
	 */
	const UNITS = {
		heap: {
			held: 'outstanding', Held: 'Outstanding', block: 'block', Blocks: 'Blocks',
			allocs: 'Allocs', Allocations: 'Allocations', leakers: 'Top leakers',
			leakersNote: 'Stacks still holding memory at the last report, those growing ' +
				'steadily first (largest growth first), then most bytes first, each named by ' +
				'the function that called the allocator.',
			timeline: 'Outstanding memory over the run',
			flameNote: 'Callers on top, the allocator\'s caller at the bottom of each tower; ' +
				'width is the share of what is still held.',
			timelineNote: 'One point per report. Outstanding bytes: what was allocated ' +
				'since tracing began and not yet freed. RSS: the target\'s resident memory.',
			mode: null,
		},
		growth: {
			held: 'resident', Held: 'Resident', block: 'page', Blocks: 'Pages',
			allocs: 'First touches', Allocations: 'First touches',
			leakers: 'Top growing stacks',
			leakersNote: 'Stacks whose first-touched pages are still resident at the last ' +
				'report, those growing steadily first (largest growth first), then most ' +
				'bytes first, each named by the function that touched them.',
			timeline: 'Resident growth over the run',
			flameNote: 'Callers on top, the function that first touched the pages at the ' +
				'bottom of each tower; width is the share of what is still resident.',
			timelineNote: 'One point per report. Resident bytes: pages of anonymous ' +
				'memory first touched since tracing began and still resident. RSS: the ' +
				'target\'s resident memory.',
			mode: 'resident growth (page faults), not allocations: pages still resident, ' +
				'by the stack that first touched each',
		},
	};
	let U = UNITS.heap;
	/* --leak-check's classes, valgrind's worst first: [key in JSON, label, column]. */
	const CLASSES = [
		['definitely_lost', 'Definitely lost', 'Definitely lost'],
		['indirectly_lost', 'Indirectly lost', 'Indirectly lost'],
		['possibly_lost', 'Possibly lost', 'Possibly lost'],
		['reachable', 'Still reachable', 'Reachable'],
	];
	/* Distinct, light enough for dark text; the busiest module gets the first. */
	const PALETTE = [
		[24, 85, 62], [205, 65, 68], [140, 45, 60], [45, 85, 58], [275, 45, 72],
		[350, 60, 74], [175, 45, 58], [95, 45, 62], [225, 40, 76], [10, 55, 70],
	];

	/* --- small helpers ------------------------------------------------- */

	function el(tag, attrs, ...children) {
		const e = document.createElement(tag);
		setAttrs(e, attrs);
		for (const c of children) {
			if (c !== null && c !== undefined)
				e.append(c);
		}
		return e;
	}

	function svg(tag, attrs, parent) {
		const e = document.createElementNS(SVG_NS, tag);
		setAttrs(e, attrs);
		if (parent)
			parent.appendChild(e);
		return e;
	}

	function setAttrs(e, attrs) {
		for (const k in attrs || {}) {
			if (k === 'text')
				e.textContent = attrs[k];
			else if (attrs[k] !== null && attrs[k] !== undefined)
				e.setAttribute(k, attrs[k]);
		}
	}

	function fmtCount(n) {
		return Number(n).toLocaleString('en-US');
	}

	function plural(n, word) {
		return fmtCount(n) + ' ' + word + (n === 1 ? '' : 's');
	}

	/* As in the text report: "512 bytes", "47.2 KiB". */
	function fmtSize(n) {
		const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
		let v = n / 1024;
		let i = 0;

		if (n < 1024)
			return plural(n, 'byte');
		while (v >= 1023.95 && i + 1 < units.length) {
			v /= 1024;
			i++;
		}
		return fixed1(v) + ' ' + units[i];
	}

	/*
	 * v with one decimal as C's "%.1f" prints it: an exact tie (3.25)
	 * rounds to even, where toFixed() rounds it up. A size in a binary
	 * unit is a dyadic fraction, so its ties are exact in floating point.
	 */
	function fixed1(v) {
		const t = v * 10;
		const f = Math.floor(t);

		return ((t - f === 0.5 ? f + (f % 2) : Math.round(t)) / 10).toFixed(1);
	}

	/* Axis labels: no ".0", "0" for nothing. */
	function fmtSizeShort(n) {
		if (n === 0)
			return '0';
		if (n < 1024)
			return n + ' B';
		return fmtSize(n).replace('.0 ', ' ');
	}

	function fmtPercent(part, whole) {
		if (!whole)
			return '0%';
		const p = 100 * part / whole;
		return (p >= 10 || p === 0 ? p.toFixed(0) : p.toFixed(1)) + '%';
	}

	function pad2(n) {
		return String(n).padStart(2, '0');
	}

	function fmtClock(t, millis) {
		const d = new Date(t * 1000);
		let s = pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());

		if (millis)
			s += '.' + String(d.getMilliseconds()).padStart(3, '0');
		return s;
	}

	function fmtDate(t) {
		const d = new Date(t * 1000);

		return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) +
			' ' + fmtClock(t, false);
	}

	function fmtDuration(s) {
		if (s < 60)
			return (s < 10 ? s.toFixed(2) : s.toFixed(1)) + ' s';
		const h = Math.floor(s / 3600);
		const m = Math.floor(s / 60) % 60;
		const sec = Math.floor(s % 60);
		return (h ? h + ' h ' : '') + m + ' min ' + sec + ' s';
	}

	function basename(path) {
		return path ? path.replace(/\/+$/, '').replace(/^.*\//, '') : '';
	}

	/* A frame's name as the text report prints it. */
	function frameName(fr) {
		if (!fr)
			return '(stack unknown)';
		if (fr.function)
			return (fr.inlined ? '[inlined] ' : '') + fr.function;
		return fr.module ? '??' : fr.addr;
	}

	function frameSource(fr) {
		if (!fr || !fr.file)
			return '';
		return fr.line ? fr.file + ':' + fr.line : fr.file;
	}

	function frameWhere(fr) {
		return fr.module ? fr.module + '+' + fr.offset : '(unknown)';
	}

	function hashString(s) {
		let h = 2166136261;

		for (let i = 0; i < s.length; i++) {
			h ^= s.charCodeAt(i);
			h = Math.imul(h, 16777619);
		}
		return h >>> 0;
	}

	/* Round up to 1, 2, 2.5 or 5 times a power of ten. */
	function niceStep(range, ticks) {
		const raw = range / Math.max(ticks, 1);
		const mag = Math.pow(10, Math.floor(Math.log10(raw)));
		for (const m of [1, 2, 2.5, 5, 10]) {
			if (raw <= m * mag)
				return m * mag;
		}
		return 10 * mag;
	}

	/* Time axis steps, in seconds: round numbers of seconds, minutes, hours. */
	const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
		10800, 21600, 43200, 86400];

	function timeStep(range, ticks) {
		const raw = range / Math.max(ticks, 1);
		if (raw < 1)
			return niceStep(range, ticks);
		return TIME_STEPS.find((s) => s >= raw) || Math.ceil(raw / 86400) * 86400;
	}

	/* "0.5 s", "30 s", "5 min", "1 h 30 min": a tick label at a round step. */
	function fmtTick(t) {
		if (t < 60 || t % 60)
			return +t.toFixed(3) + ' s';
		const h = Math.floor(t / 3600);
		const m = t / 60 % 60;
		return h ? h + ' h' + (m ? ' ' + m + ' min' : '') : m + ' min';
	}

	/* Byte axis: steps in the binary unit of the maximum (0, 20 KiB, 40 KiB). */
	function byteTicks(max) {
		let unit = 1;

		while (max / unit >= 1024 && unit < Math.pow(1024, 6))
			unit *= 1024;
		const step = Math.max(niceStep(max / unit || 1, 4), unit === 1 ? 1 : 0) * unit;
		const top = Math.max(step, Math.ceil(max / step) * step);
		const ticks = [];
		for (let v = 0; v <= top + step / 2; v += step)
			ticks.push(v);
		return ticks;
	}

	/* --- tooltip ------------------------------------------------------- */

	const tooltip = {
		box: null,
		show(ev, lines) {
			const box = this.box;
			box.replaceChildren();
			for (const [cls, text] of lines) {
				if (text)
					box.append(el('div', { class: cls, text: text }));
			}
			box.hidden = false;
			this.move(ev);
		},
		move(ev) {
			const box = this.box;
			const w = box.offsetWidth;
			const h = box.offsetHeight;
			let x = ev.clientX + 14;
			let y = ev.clientY + 16;
			if (x + w > window.innerWidth - 4)
				x = Math.max(4, ev.clientX - w - 14);
			if (y + h > window.innerHeight - 4)
				y = Math.max(4, ev.clientY - h - 12);
			box.style.left = x + 'px';
			box.style.top = y + 'px';
		},
		hide() {
			this.box.hidden = true;
		},
	};

	/* --- module colours ---------------------------------------------------- */

	/*
	 * One hue per module, the same in every graph and table; within a
	 * module the lightness varies a little by function, so that neighbours
	 * stay apart.
	 */
	function makeColors(stacks) {
		const weight = new Map();
		for (const s of stacks) {
			for (const fr of s.frames) {
				const m = fr.module || '';
				weight.set(m, (weight.get(m) || 0) + s.outstanding_bytes + 1);
			}
		}
		const modules = [...weight.keys()].filter((m) => m).sort(
			(a, b) => weight.get(b) - weight.get(a) || (a < b ? -1 : 1));
		const hsl = new Map();
		modules.forEach((m, i) => {
			hsl.set(m, i < PALETTE.length ? PALETTE[i]
				: [hashString(m) % 360, 50, 66]);
		});
		return {
			modules: modules,
			of(module, name) {
				const c = hsl.get(module || '');
				if (!c)
					return 'hsl(220, 8%, 78%)';
				const dl = (hashString(name || '') % 9) - 4;
				return 'hsl(' + c[0] + ', ' + c[1] + '%, ' + (c[2] + dl) + '%)';
			},
		};
	}

	/* --- flame graph --------------------------------------------------- */

	let charWidth = 0;

	function monoCharWidth() {
		if (!charWidth) {
			const ctx = document.createElement('canvas').getContext('2d');
			ctx.font = MONO_FONT;
			charWidth = ctx.measureText('mmmmmmmmmm').width / 10 || 6.6;
		}
		return charWidth;
	}

	function fitLabel(text, width) {
		const n = Math.floor((width - 6) / monoCharWidth());
		if (n < 3)
			return '';
		return text.length <= n ? text : text.slice(0, n - 1) + '\u2026';
	}

	/* Key that merges the same function in the same module under one parent. */
	function frameKey(fr) {
		if (fr.function)
			return (fr.module || '') + '\0' + (fr.inlined ? 'i' : '') + fr.function;
		return fr.module ? fr.module + '\0' + fr.offset : '\0' + fr.addr;
	}

	/*
	 * The call tree, outermost caller at the top: frames come innermost
	 * first. Each node sums both weights; a graph picks one.
	 */
	function buildTree(stacks) {
		const root = { name: 'all', frame: null, bytes: 0, blocks: 0, lost: 0, lostBlocks: 0,
			depth: 0, parent: null, kids: new Map() };
		let maxDepth = 0;

		for (const s of stacks) {
			const frames = s.frames.length ? s.frames.slice().reverse() : [null];
			let node = root;
			const add = (n) => {
				n.bytes += s.outstanding_bytes;
				n.blocks += s.outstanding_allocs;
				n.lost += s.definitely_lost_bytes || 0;
				n.lostBlocks += s.definitely_lost_allocs || 0;
			};
			add(root);
			for (const fr of frames) {
				const key = fr ? frameKey(fr) : '\0unknown';
				let kid = node.kids.get(key);
				if (!kid) {
					kid = { name: frameName(fr), frame: fr, bytes: 0, blocks: 0, lost: 0,
						lostBlocks: 0, depth: node.depth + 1, parent: node, kids: new Map() };
					node.kids.set(key, kid);
				}
				add(kid);
				node = kid;
			}
			maxDepth = Math.max(maxDepth, node.depth);
		}
		return { root: root, maxDepth: maxDepth };
	}

	function makeFlame(container, title, key, colors) {
		const fmt = key === 'blocks' ? (n) => plural(n, U.block) : fmtSize;
		const head = el('div', { class: 'flame-head' });
		const h3 = el('h3', { text: title });
		const reset = el('button', { type: 'button', text: 'Reset zoom' });
		const up = el('button', { type: 'button', text: 'Zoom out' });
		const path = el('span', { class: 'path' });
		const box = el('div');
		const state = { tree: null, focus: null, nodes: [] };

		head.append(h3, up, reset, path);
		container.replaceChildren(head, box);

		function zoom(node) {
			state.focus = node;
			draw();
		}

		reset.addEventListener('click', () => zoom(state.tree.root));
		up.addEventListener('click', () => {
			if (state.focus.parent)
				zoom(state.focus.parent);
		});

		function sortedKids(node) {
			if (!node.sorted) {
				node.sorted = [...node.kids.values()].sort((a, b) =>
					b[key] - a[key] || (a.name < b.name ? -1 : 1));
			}
			return node.sorted;
		}

		function draw() {
			const width = Math.max(box.clientWidth, 300);
			const { root, maxDepth } = state.tree;
			const focus = state.focus;
			const height = (maxDepth + 1) * ROW + 2;
			const s = svg('svg', { id: container.id + '-svg', width: width, height: height,
				viewBox: '0 0 ' + width + ' ' + height, role: 'img',
				'aria-label': title });
			const nodes = [];

			function box1(node, x, w, cls) {
				const g = svg('g', { transform: 'translate(' + x.toFixed(2) + ',' +
					node.depth * ROW + ')', 'data-i': nodes.length, class: cls }, s);
				nodes.push(node);
				svg('rect', { width: Math.max(w, 0.5).toFixed(2), height: ROW - 1,
					rx: 1.5, fill: node.frame ? colors.of(node.frame.module, node.name)
						: 'hsl(220, 10%, 82%)' }, g);
				const label = fitLabel(node === root ? 'all: ' + fmt(root[key]) : node.name, w);
				if (label)
					svg('text', { x: 4, y: ROW - 5.5, text: label }, g);
			}

			/* Ancestors of the zoomed box keep the full width, faded. */
			for (let a = focus.parent; a; a = a.parent)
				box1(a, 0, width, 'ancestor');
			const scale = focus[key] ? width / focus[key] : 0;
			(function walk(node, x) {
				const w = node[key] * scale;
				if (w < 0.5)
					return;
				box1(node, x, w, 'node');
				let kx = x;
				for (const kid of sortedKids(node)) {
					walk(kid, kx);
					kx += kid[key] * scale;
				}
			})(focus, 0);

			s.addEventListener('click', (ev) => {
				const g = ev.target.closest('g[data-i]');
				if (g)
					zoom(nodes[+g.getAttribute('data-i')]);
			});
			s.addEventListener('mousemove', (ev) => {
				const g = ev.target.closest('g[data-i]');
				if (!g)
					return tooltip.hide();
				const n = nodes[+g.getAttribute('data-i')];
				const fr = n.frame;
				const other = key === 'blocks' ? fmtSize(n.bytes) : plural(key === 'lost'
					? n.lostBlocks : n.blocks, key === 'lost' ? 'block' : U.block);
				tooltip.show(ev, [
					['tt-name', n === root ? 'all stacks' : n.name],
					['tt-dim', fr ? frameWhere(fr) : ''],
					['tt-dim', frameSource(fr)],
					['', fmt(n[key]) + ' (' + other + ')'],
					['', fmtPercent(n[key], root[key]) + ' of all' +
						(focus !== root ? ', ' + fmtPercent(n[key], focus[key]) +
							' of the zoomed box' : '')],
				]);
			});
			s.addEventListener('mouseleave', () => tooltip.hide());

			box.replaceChildren(s);
			state.nodes = nodes;
			reset.disabled = up.disabled = focus === root;
			const names = [];
			for (let a = focus; a; a = a.parent)
				names.unshift(a === root ? 'all' : a.name);
			path.textContent = focus === root ? '' : 'zoomed: ' + names.join(' \u203a ');
			path.title = path.textContent;
			container.setAttribute('data-ready', 'true');
		}

		return {
			setStacks(stacks) {
				state.tree = buildTree(stacks);
				state.focus = state.tree.root;
				if (!stacks.length) {
					box.replaceChildren(el('p', { class: 'muted',
						text: 'No stack holds memory.' }));
					reset.disabled = up.disabled = true;
					container.setAttribute('data-ready', 'true');
					return;
				}
				draw();
			},
			redraw() {
				if (state.tree && state.tree.root.kids.size)
					draw();
			},
			reset() {
				if (state.tree && state.focus.parent)
					zoom(state.tree.root);
			},
		};
	}

	/* --- timeline ------------------------------------------------------- */

	function drawTimeline(container, data) {
		const pts = data.series || [];
		const bigs = data.big_allocs || [];

		if (!pts.length) {
			container.replaceChildren(el('p', { class: 'muted', text: 'No report was made.' }));
			container.setAttribute('data-ready', 'true');
			return;
		}
		const width = Math.max(container.clientWidth, 400);
		const height = 280;
		const hasRss = pts.some((p) => p[3] !== null);
		const m = { left: 74, right: hasRss ? 74 : 20, top: 30, bottom: 34 };
		const pw = width - m.left - m.right;
		const ph = height - m.top - m.bottom;
		const t0 = Math.min(data.start, pts[0][0]);
		let t1 = pts[pts.length - 1][0];
		for (const b of bigs)
			t1 = Math.max(t1, b.time);
		if (t1 - t0 < 0.001)
			t1 = t0 + 1;
		const outTicks = byteTicks(Math.max(...pts.map((p) => p[1])));
		const rssTicks = byteTicks(Math.max(0, ...pts.map((p) => p[3] || 0)));
		const outMax = outTicks[outTicks.length - 1];
		const rssMax = rssTicks[rssTicks.length - 1];
		const X = (t) => m.left + (t - t0) / (t1 - t0) * pw;
		const Yo = (v) => m.top + ph - v / outMax * ph;
		const Yr = (v) => m.top + ph - v / rssMax * ph;
		const s = svg('svg', { id: 'timeline-svg', width: width, height: height,
			viewBox: '0 0 ' + width + ' ' + height, role: 'img',
			'aria-label': U.held + ' bytes and RSS over time' });

		const grid = svg('g', { class: 'grid' }, s);
		const axes = svg('g', { class: 'axis' }, s);
		for (const v of outTicks) {
			svg('line', { x1: m.left, x2: m.left + pw, y1: Yo(v), y2: Yo(v) }, grid);
			svg('text', { x: m.left - 6, y: Yo(v) + 4, 'text-anchor': 'end',
				class: 'ax-out', text: fmtSizeShort(v) }, axes);
		}
		/* RSS has its own scale, labelled on the right. */
		if (hasRss) {
			for (const v of rssTicks) {
				svg('text', { x: m.left + pw + 6, y: Yr(v) + 4, class: 'ax-rss',
					text: fmtSizeShort(v) }, axes);
			}
		}
		const dt = timeStep(t1 - t0, Math.max(2, Math.floor(pw / 100)));
		for (let t = 0; t <= t1 - t0 + dt / 1000; t += dt) {
			const x = X(t0 + t);
			svg('line', { x1: x, x2: x, y1: m.top + ph, y2: m.top + ph + 4 }, axes);
			svg('text', { x: x, y: m.top + ph + 17, 'text-anchor': 'middle',
				text: fmtTick(t) }, axes);
		}
		svg('line', { x1: m.left, x2: m.left + pw, y1: m.top + ph, y2: m.top + ph }, axes);
		svg('text', { x: m.left + pw / 2, y: height - 2, 'text-anchor': 'middle',
			text: 'time since tracing began' }, axes);

		/* Area and line of outstanding bytes; RSS dashed on its own scale. */
		const line = (Y, k) => pts.filter((p) => p[k] !== null).map((p, i) =>
			(i ? 'L' : 'M') + X(p[0]).toFixed(1) + ',' + Y(p[k]).toFixed(1)).join('');
		/* Nothing was outstanding when tracing began: the line starts at 0. */
		const out = (data.start < pts[0][0] ? 'M' + X(data.start).toFixed(1) + ',' +
			Yo(0).toFixed(1) + 'L' : 'M') + line(Yo, 1).slice(1);
		if (pts.length > 1 || data.start < pts[0][0]) {
			svg('path', { class: 'area-out', d: out + 'L' + X(pts[pts.length - 1][0]).toFixed(1) +
				',' + (m.top + ph) + 'L' + X(Math.min(data.start, pts[0][0])).toFixed(1) + ',' +
				(m.top + ph) + 'Z' }, s);
		}
		svg('path', { id: 'timeline-outstanding', class: 'line-out', d: out }, s);
		if (hasRss)
			svg('path', { id: 'timeline-rss', class: 'line-rss', d: line(Yr, 3) }, s);
		if (pts.length <= 80) {
			for (const p of pts) {
				svg('circle', { class: 'dot-out', cx: X(p[0]), cy: Yo(p[1]), r: 3 }, s);
				if (p[3] !== null)
					svg('circle', { class: 'dot-rss', cx: X(p[0]), cy: Yr(p[3]), r: 2.5 }, s);
			}
		}

		/* Legend, top left. */
		const lg = svg('g', { transform: 'translate(' + m.left + ',12)' }, s);
		svg('line', { class: 'line-out', x1: 0, x2: 18, y1: 0, y2: 0 }, lg);
		svg('text', { class: 'legend-text', x: 24, y: 4, text: U.held + ' bytes (left)' }, lg);
		if (hasRss) {
			svg('line', { class: 'line-rss', x1: 190, x2: 208, y1: 0, y2: 0 }, lg);
			svg('text', { class: 'legend-text', x: 214, y: 4, text: 'RSS (right)' }, lg);
		}
		if (bigs.length) {
			const bx = hasRss ? 310 : 190;
			svg('path', { class: 'big-mark', d: 'M' + bx + ',-4l10,0l-5,9z' }, lg);
			svg('text', { class: 'legend-text', x: bx + 16, y: 4, text: 'big allocation' }, lg);
		}

		/* Hover: the nearest report. */
		const cursor = svg('line', { class: 'cursor', y1: m.top, y2: m.top + ph,
			visibility: 'hidden' }, s);
		const hit = svg('rect', { x: m.left, y: m.top, width: pw, height: ph,
			fill: 'transparent' }, s);
		hit.addEventListener('mousemove', (ev) => {
			const r = s.getBoundingClientRect();
			const x = (ev.clientX - r.left) * width / r.width;
			let best = pts[0];
			for (const p of pts) {
				if (Math.abs(X(p[0]) - x) < Math.abs(X(best[0]) - x))
					best = p;
			}
			cursor.setAttribute('x1', X(best[0]));
			cursor.setAttribute('x2', X(best[0]));
			cursor.setAttribute('visibility', 'visible');
			tooltip.show(ev, [
				['tt-name', fmtClock(best[0], false) + '  (+' + fmtDuration(best[0] - t0) + ')'],
				['', U.held + ': ' + fmtSize(best[1]) + ' in ' + plural(best[2], U.block)],
				['', best[3] !== null ? 'RSS: ' + fmtSize(best[3]) : 'RSS unknown'],
			]);
		});
		hit.addEventListener('mouseleave', () => {
			cursor.setAttribute('visibility', 'hidden');
			tooltip.hide();
		});

		/* Big allocations: a mark at the top of the plot each, above the hover area. */
		for (const b of bigs) {
			const x = X(b.time).toFixed(1);
			const mk = svg('g', { class: 'big-mark' }, s);
			svg('line', { x1: x, x2: x, y1: m.top, y2: m.top + ph }, mk);
			svg('path', { d: 'M' + x + ',' + (m.top + 8) + 'l-5,-9l10,0z' }, mk);
			mk.addEventListener('mousemove', (ev) => tooltip.show(ev, [
				['tt-name', b.func + ' ' + fmtSize(b.size)],
				['tt-dim', fmtClock(b.time, true) + ', tid ' + b.tid],
				['', b.frames.length ? frameName(b.frames[0]) : '(stack unknown)'],
			]));
			mk.addEventListener('mouseleave', () => tooltip.hide());
		}

		container.replaceChildren(s);
		container.setAttribute('data-ready', 'true');
	}

	/* --- tables --------------------------------------------------------- */

	function stackList(frames) {
		if (!frames.length)
			return el('p', { class: 'mono muted', text: '(stack unknown)' });
		const ol = el('ol', { class: 'stack', start: 0 });
		for (const fr of frames) {
			const src = frameSource(fr);
			ol.append(el('li', null, frameName(fr),
				el('span', { class: 'where', text: ' (' + frameWhere(fr) + ')' +
					(src ? ' at ' + src : '') })));
		}
		return ol;
	}

	/*
	 * A table whose rows open to show their stack. @cols: [header, class,
	 * cell(item) -> string or Node]. Long lists show their first rows and a
	 * button for the rest.
	 */
	function stackTable(container, id, cols, items) {
		const table = el('table', { class: 'data', id: id });
		const tr = el('tr', null, el('th'));
		for (const [name, cls] of cols)
			tr.append(el('th', { class: cls.startsWith('num') ? 'num' : null, text: name }));
		const tbody = el('tbody');
		table.append(el('thead', null, tr), tbody);

		function addRows(from, to) {
			for (let i = from; i < to; i++) {
				const item = items[i];
				const toggle = el('span', { class: 'toggle', text: '\u25b8' });
				const row = el('tr', { class: 'row', tabindex: 0 }, el('td', null, toggle));
				for (const [, cls, cell] of cols)
					row.append(el('td', { class: cls }, cell(item, i)));
				let open = null;
				const flip = () => {
					if (open) {
						open.remove();
						open = null;
					} else {
						open = el('tr', { class: 'frames' }, el('td', { colspan: cols.length + 1 },
							stackList(item.frames)));
						row.after(open);
					}
					toggle.textContent = open ? '\u25be' : '\u25b8';
				};
				row.addEventListener('click', flip);
				row.addEventListener('keydown', (ev) => {
					if (ev.key === 'Enter' || ev.key === ' ') {
						ev.preventDefault();
						flip();
					}
				});
				tbody.append(row);
			}
		}

		addRows(0, Math.min(items.length, TABLE_ROWS));
		container.replaceChildren(el('div', { class: 'scroll' }, table));
		if (items.length > TABLE_ROWS) {
			const more = el('button', { type: 'button',
				text: 'Show all ' + fmtCount(items.length) + ' rows' });
			more.addEventListener('click', () => {
				addRows(TABLE_ROWS, items.length);
				more.remove();
			});
			container.append(el('p', null, more));
		}
	}

	function moduleCell(fr, colors) {
		if (!fr || !fr.module)
			return fr ? '(unknown)' : '';
		return el('span', { title: fr.module },
			el('span', { class: 'swatch', style: 'background:' + colors.of(fr.module, '') }),
			basename(fr.module));
	}

	/* Most bytes first, then most blocks, as reports list them. */
	function byBytes(stacks) {
		return stacks.slice().sort((a, b) => b.outstanding_bytes - a.outstanding_bytes ||
			b.outstanding_allocs - a.outstanding_allocs);
	}

	/*
	 * The stacks growing steadily first, the largest growth first, as the
	 * report's "growing" list has them (its stacks may be past the cut of
	 * "stacks"), then the others in @stacks' order.
	 */
	function growingFirst(stacks, growing) {
		const key = (s) => JSON.stringify(s.frames);
		const listed = new Set(stacks.map(key));
		const lead = stacks.filter((s) => s.trend === 'growing')
			.concat((growing || []).filter((s) => !listed.has(key(s))))
			.sort((a, b) => b.growth_bytes - a.growth_bytes);
		return lead.concat(stacks.filter((s) => s.trend !== 'growing'));
	}

	/*
	 * The trend as the text report says it beside a stack: "growing +20.0
	 * KiB", "stable", "shrinking -4.0 KiB"; a stack too new for a trend,
	 * its growth since the last report, "+4.0 KiB since the last report".
	 */
	function trendText(s) {
		const g = s.growth_bytes || 0;
		const size = (g > 0 ? '+' : '-') + fmtSize(Math.abs(g));

		if (!s.trend)
			return '';
		if (s.trend === 'new')
			return g > 0 ? size + ' since the last report' : 'new';
		return s.trend + (g ? ' ' + size : '');
	}

	/* A stack's held bytes, "about" when they are a sampled estimate (--growth). */
	function heldText(s) {
		return (s.resident_bytes_stderr ? 'about ' : '') + fmtSize(s.outstanding_bytes);
	}

	/* Whether the report carries --leak-check's verdicts. */
	function hasVerdicts(report) {
		return !!(report.leak_check && !report.leak_check.error);
	}

	/* "128 B in 2": a class's bytes and blocks in a stack, "" for none. */
	function classCell(s, cls) {
		const n = s[cls + '_allocs'] || 0;
		return n ? fmtSizeShort(s[cls + '_bytes']) + ' in ' + fmtCount(n) : '';
	}

	function drawLeakers(container, report, colors) {
		const verdicts = hasVerdicts(report);
		/*
		 * With verdicts, as the text report: definitely lost bytes first;
		 * without, the stacks growing steadily first.
		 */
		const stacks = verdicts ? byBytes(report.stacks).sort((a, b) =>
			(b.definitely_lost_bytes || 0) - (a.definitely_lost_bytes || 0))
			: growingFirst(byBytes(report.stacks), report.growing);
		const total = report.totals.outstanding_bytes;
		/* Bars compare the stacks with the biggest; the text is the share of all. */
		const max = Math.max(0, ...stacks.map((s) => s.outstanding_bytes));

		if (!stacks.length) {
			container.replaceChildren(el('p', { class: 'muted', text: 'No stack holds memory.' }));
			return;
		}
		const cols = [
			['#', 'num', (s, i) => String(i + 1)],
			['Function', 'mono', (s) => frameName(s.frames[0])],
			['Module', 'module', (s) => moduleCell(s.frames[0], colors)],
			['Source', 'mono', (s) => frameSource(s.frames[0])],
			[U.Held, 'num', (s) => heldText(s)],
			['Trend', 'trend', (s) => el('span', { class: s.trend === 'growing' ? 'growing'
				: null, text: trendText(s) })],
			['Share', 'num', (s) => el('span', null, el('span', { class: 'share' },
				el('span', { style: 'width:' + (max ? (100 * s.outstanding_bytes / max)
					.toFixed(1) : 0) + '%' })), fmtPercent(s.outstanding_bytes, total))],
			[U.Blocks, 'num', (s) => fmtCount(s.outstanding_allocs)],
			[U.allocs, 'num', (s) => fmtCount(s.allocs)],
		];
		if (verdicts) {
			for (const [cls, , column] of CLASSES)
				cols.push([column, 'num ' + cls, (s) => classCell(s, cls)]);
		}
		stackTable(container, 'leakers-table', cols, stacks);
		if (report.stacks_holding > stacks.length) {
			container.append(el('p', { class: 'muted', text: fmtCount(report.stacks_holding -
				stacks.length) + ' more stacks held memory but are not in the report.' }));
		}
	}

	function drawBig(container, data, t0) {
		const bigs = data.big_allocs || [];
		const seen = data.big_allocs_seen || 0;

		if (!seen) {
			container.replaceChildren(el('p', { class: 'muted',
				text: 'None. Alerts are made for allocations of at least --big SIZE.' }));
			return;
		}
		stackTable(container, 'big-table', [
			['Time', 'num', (b) => fmtClock(b.time, true)],
			['Since start', 'num', (b) => b.time - t0 < 60 ? (b.time - t0).toFixed(3) + ' s'
				: fmtDuration(b.time - t0)],
			['TID', 'num', (b) => String(b.tid)],
			['Call', 'mono', (b) => b.func],
			['Size', 'num', (b) => fmtSize(b.size)],
			['Called from', 'mono', (b) => frameName(b.frames[0])],
			['Source', 'mono', (b) => frameSource(b.frames[0])],
		], bigs);
		if (seen > bigs.length) {
			container.append(el('p', { class: 'muted', text: 'The first ' +
				fmtCount(bigs.length) + ' of ' + fmtCount(seen) + ' alerts are kept.' }));
		}
	}

	/* --- summary -------------------------------------------------------- */

	/* [state, detail] of the target at the last report. */
	function exitText(report) {
		const e = report.exit;

		if (!e)
			return report.final ? ['traced to the end', null] : ['running', null];
		if (e.signal !== null)
			return ['killed', 'by signal ' + e.signal];
		if (e.status !== null)
			return ['exited', 'with status ' + e.status];
		return ['exited', null];
	}

	function stat(label, value, sub, id) {
		return el('div', { class: 'stat', id: id }, el('div', { class: 'label', text: label }),
			el('div', { class: 'value', text: value }),
			sub ? el('div', { class: 'sub', text: sub }) : null);
	}

	/*
	 * The counters of the given kinds with their reasons, from the loader's
	 * own table (data.counters): "lost" and "unknown_stack" say numbers are
	 * missing, "unknown_stack" and "stack" that stacks are not whole, as the
	 * text report's two warning lines.
	 */
	function counterReasons(data, kinds) {
		const out = {};
		for (const [k, v] of Object.entries(data.counters || {})) {
			if (kinds.includes(v.kind))
				out[k] = v.reason;
		}
		return out;
	}

	function drawSummary(data, report) {
		const t = report.totals;
		const c = report.counters || {};
		const pts = data.series || [];
		const stats = document.getElementById('summary-stats');
		let peak = null;
		let rss = null;
		let lastRss = null;

		for (const p of pts) {
			if (!peak || p[1] > peak[1])
				peak = p;
			if (p[3] !== null && (!rss || p[3] > rss[3]))
				rss = p;
			if (p[3] !== null)
				lastRss = p;
		}
		const dur = report.time - data.start;

		stats.append(
			stat('Target', report.comm || '?', 'pid ' + report.pid),
			stat('Status', exitText(report)[0], [exitText(report)[1],
				(report.final ? 'final report at ' : 'last report at ') +
				fmtClock(report.time, false)].filter((x) => x).join('; ')),
			stat('Duration', fmtDuration(Math.max(dur, 0)), plural(data.reports, 'report') +
				(data.interval ? ', every ' + data.interval + ' s' : '')),
			stat(U.Held, (report.sampled ? 'about ' : '') + fmtSize(t.outstanding_bytes),
				fmtCount(t.outstanding_bytes) + ' bytes in ' + plural(t.outstanding_allocs,
					U.block) + (report.sampled ? ', standard error ' +
					fmtSize(report.resident_bytes_stderr || 0) : ''), 'stat-held'),
			stat('Stacks holding memory', fmtCount(report.stacks_holding)),
			stat(U.Allocations, fmtCount(t.allocs), report.growth ? (report.sampled ?
				'recorded; ' + fmtCount(c.pages_sampled_out || 0) + ' sampled out' : null)
				: fmtCount(t.frees) + ' frees, ' + fmtCount(t.untracked_frees) +
				' untracked frees'),
			stat('Peak ' + U.held, peak ? (report.sampled ? 'about ' : '') + fmtSize(peak[1])
				: '?', peak ?
				'at +' + fmtDuration(peak[0] - data.start) : null),
			stat('RSS', lastRss ? fmtSize(lastRss[3]) : 'unknown', lastRss ?
				(lastRss !== pts[pts.length - 1] ? 'at ' + fmtClock(lastRss[0], false) + ', ' : '') +
				'peak ' + fmtSize(rss[3]) : null),
			stat('Big allocations', fmtCount(data.big_allocs_seen || 0)));
		drawLeakSummary(stats, report);

		/* As the text report's warning line: what is missing, and why. */
		const lossReasons = counterReasons(data, ['lost', 'unknown_stack']);
		const stackReasons = counterReasons(data, ['unknown_stack', 'stack']);
		const lost = Object.keys(lossReasons).filter((k) => c[k]);
		const box = document.getElementById('summary-complete');
		if (report.complete && !lost.length) {
			box.append(el('span', { id: 'complete', class: 'badge good',
				text: 'Numbers complete' }), ' nothing was lost.');
		} else {
			box.append(el('span', { id: 'complete', class: 'badge ' +
				(report.complete ? 'good' : 'bad'), text: report.complete
					? 'Numbers complete, some stacks unknown' : 'Numbers incomplete' }),
			' ' + lost.map((k) => k + '=' + fmtCount(c[k]) + ' (' + lossReasons[k] + ')')
				.join(', '));
			document.getElementById('summary-counters-box').open = true;
		}
		const cut = Object.keys(stackReasons).filter((k) => c[k]);
		box.append(el('br', {}), el('span', { id: 'stacks-complete', class: 'badge ' +
			(report.stacks_complete ? 'good' : 'bad'), text: report.stacks_complete
				? 'Stacks complete' : 'Stacks incomplete' }), ' ' + (report.stacks_complete
			? 'every stack walked to its outermost frame.'
			: cut.map((k) => k + '=' + fmtCount(c[k]) + ' (' + stackReasons[k] + ')')
				.join(', ')));
		const table = document.getElementById('summary-counters');
		for (const k of Object.keys(c)) {
			table.append(el('tr', { class: lossReasons[k] && c[k] ? 'nonzero' : '' },
				el('td', { class: 'mono', text: k }), el('td', { class: 'num', text: fmtCount(c[k]) })));
		}
	}

	/* --leak-check: valgrind's LEAK SUMMARY, the pause, what the verdicts rest on. */
	function drawLeakSummary(stats, report) {
		const lc = report.leak_check;
		const t = report.totals;

		if (!lc)
			return;
		if (lc.error) {
			stats.append(stat('Leak check', 'no verdicts', lc.error, 'stat-leak-check'));
			return;
		}
		for (const [cls, label] of CLASSES) {
			stats.append(stat(label, fmtSize(t[cls + '_bytes']), fmtCount(t[cls + '_bytes']) +
				' bytes in ' + plural(t[cls + '_allocs'], 'block'), 'stat-' + cls));
		}
		stats.append(stat('Leak check', 'paused ' + lc.pause_ms.toFixed(3) + ' ms',
			fmtSize(lc.bytes_scanned) + ' of roots scanned' + (lc.assumptions.length
				? '; assumed: ' + lc.assumptions.join(', ') : ''), 'stat-leak-check'));
	}

	/* --- page ----------------------------------------------------------- */

	/*
	 * A report on several processes as one on all their stacks, each under
	 * an outermost frame "pid N (comm)" as in the folded and pprof files, so
	 * that the flame graphs show a tower per process.
	 */
	function byProcess(report) {
		const stacks = [];
		const threads = [];
		const growing = [];
		let holding = 0;

		for (const p of report.processes) {
			const root = { addr: null, module: null, offset: null, function: 'pid ' + p.pid +
				' (' + (p.comm || '?') + ')', file: null, line: null, inlined: false };
			const under = (s) => Object.assign({}, s, { frames: (s.frames.length ? s.frames
				: [{ function: '[stack unknown]', inlined: false }]).concat([root]) });
			stacks.push(...p.stacks.map(under));
			growing.push(...(p.growing || []).map(under));
			for (const th of p.threads || [])
				threads.push(Object.assign({}, th, { stacks: (th.stacks || []).map(under) }));
			holding += p.stacks_holding;
		}
		return Object.assign({}, report, mergedVerdicts(report), {
			comm: report.processes.length === 1 ? report.processes[0].comm
				: report.processes.length + ' processes',
			pid: report.processes.map((p) => p.pid).join(', '),
			stacks: stacks,
			growing: growing,
			stacks_holding: holding,
			threads: threads,
		});
	}

	/*
	 * The processes' verdicts as one report's: class totals summed, the
	 * longest pause, the roots scanned summed, every assumption. Nothing
	 * without a process that has verdicts.
	 */
	function mergedVerdicts(report) {
		const checked = report.processes.filter(hasVerdicts);
		if (!checked.length)
			return {};
		const totals = Object.assign({}, report.totals);
		const lc = { pause_ms: 0, bytes_scanned: 0, assumptions: [] };
		for (const [cls] of CLASSES) {
			for (const k of [cls + '_bytes', cls + '_allocs'])
				totals[k] = checked.reduce((sum, p) => sum + p.totals[k], 0);
		}
		for (const p of checked) {
			lc.pause_ms = Math.max(lc.pause_ms, p.leak_check.pause_ms);
			lc.bytes_scanned += p.leak_check.bytes_scanned;
			for (const a of p.leak_check.assumptions) {
				if (!lc.assumptions.includes(a))
					lc.assumptions.push(a);
			}
		}
		return { leak_check: lc, totals: totals };
	}

	function drawLegend(container, colors) {
		container.replaceChildren();
		for (const m of colors.modules) {
			container.append(el('span', { title: m }, el('span', { class: 'swatch',
				style: 'background:' + colors.of(m, '') }), basename(m)));
		}
	}

	function main() {
		const data = JSON.parse(document.getElementById('alloctrace-data').textContent);
		const report = data.report && data.report.processes ? byProcess(data.report) : data.report;
		tooltip.box = document.getElementById('tooltip');

		if (!report) {
			document.getElementById('page-error').hidden = false;
			document.getElementById('page-error').textContent =
				'alloctrace made no report: there is nothing to show.';
			drawTimeline(document.getElementById('timeline'), data);
			drawBig(document.getElementById('big'), data, data.start);
			return;
		}
		U = report.growth ? UNITS.growth : UNITS.heap;
		document.title = 'alloctrace: ' + (report.comm || '?') + ' (pid ' + report.pid + ')' +
			(U.mode ? ', resident growth' : '');
		document.getElementById('title-target').textContent =
			'\u2014 ' + (report.comm || '?') + ' (pid ' + report.pid + ')';
		/* Past the fault budget one fault in P was recorded, as P pages. */
		const sampledOut = report.growth && report.counters ?
			report.counters.pages_sampled_out || 0 : 0;
		document.getElementById('title-mode').textContent = (U.mode || '') +
			(report.sampled ? '; sampled estimates, standard error ' +
				fmtSize(report.resident_bytes_stderr || 0) + ' (' +
				sampledOut.toLocaleString('en-US') + ' faults sampled out)' : '');
		document.getElementById('title-mode').hidden = !U.mode;
		document.getElementById('timeline-title').textContent = U.timeline;
		document.getElementById('timeline-note').textContent = U.timelineNote;
		document.getElementById('leakers-title').textContent = U.leakers;
		document.getElementById('flame-note').textContent = U.flameNote;
		document.getElementById('leakers-note').textContent = U.leakersNote +
			' Click a row for the whole stack.';
		document.getElementById('title-when').textContent = 'Traced from ' +
			fmtDate(data.start) + ' to ' + (fmtDate(report.time).slice(0, 10) ===
				fmtDate(data.start).slice(0, 10) ? fmtClock(report.time, false)
				: fmtDate(report.time)) + ' (local time)';

		const threads = Array.isArray(report.threads) ? report.threads : [];
		const all = report.stacks.concat(...threads.map((th) => th.stacks || []));
		const colors = makeColors(all);
		drawSummary(data, report);
		drawTimeline(document.getElementById('timeline'), data);
		drawLeakers(document.getElementById('leakers'), report, colors);
		drawBig(document.getElementById('big'), data, data.start);

		const flames = [
			makeFlame(document.getElementById('flame-bytes'), 'By ' + U.held + ' bytes', 'bytes',
				colors),
			makeFlame(document.getElementById('flame-blocks'), 'By ' + U.held + ' ' + U.block + 's',
				'blocks', colors),
		];
		for (const f of flames)
			f.setStacks(report.stacks);
		/* Of the whole report only: a thread's share has no classes. */
		const lostBox = document.getElementById('flame-lost');
		const lost = hasVerdicts(report) ? makeFlame(lostBox, 'By definitely lost bytes', 'lost',
			colors) : null;
		if (lost) {
			lostBox.hidden = false;
			lost.setStacks(report.stacks.filter((st) => st.definitely_lost_bytes));
		}
		drawLegend(document.getElementById('flame-legend'), colors);
		if (report.stacks_holding > report.stacks.length) {
			document.getElementById('flame-cut').hidden = false;
			document.getElementById('flame-cut').textContent = 'The ' +
				fmtCount(report.stacks.length) + ' stacks holding the most bytes, of ' +
				fmtCount(report.stacks_holding) + '.';
		}

		if (threads.length) {
			const sel = document.getElementById('thread-select');
			sel.append(el('option', { value: '', text: 'all threads' }));
			threads.forEach((th, i) => sel.append(el('option', { value: i,
				text: th.tid + (th.comm ? ' (' + th.comm + ')' : '') })));
			sel.addEventListener('change', () => {
				const st = sel.value === '' ? report.stacks : threads[+sel.value].stacks || [];
				for (const f of flames)
					f.setStacks(st);
			});
			document.getElementById('thread-select-box').hidden = false;
		}

		document.addEventListener('keydown', (ev) => {
			if (ev.key === 'Escape') {
				for (const f of flames.concat(lost ? [lost] : []))
					f.reset();
			}
		});
		let pending = 0;
		window.addEventListener('resize', () => {
			clearTimeout(pending);
			pending = setTimeout(() => {
				for (const f of flames.concat(lost ? [lost] : []))
					f.redraw();
				drawTimeline(document.getElementById('timeline'), data);
			}, 150);
		});
	}

	try {
		main();
		document.documentElement.setAttribute('data-ready', 'true');
	} catch (e) {
		document.documentElement.setAttribute('data-error', String(e));
		const p = document.getElementById('page-error');
		p.hidden = false;
		p.textContent = 'This page could not be drawn: ' + e;
		throw e;
	}
})();
