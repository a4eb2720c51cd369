// Reads a Vega-Lite spec on stdin, compiles it with vega-lite, runs it in the
// Vega runtime headlessly, and prints what was drawn as JSON: for every mark
// item, its bounds, so a test can check that the data really reached the chart.
import * as vega from "vega";
import * as vl from "vega-lite";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const spec = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const compiled = vl.compile(spec).spec;
const view = new vega.View(vega.parse(compiled), { renderer: "none" });
await view.runAsync();

const items = [];
const walk = (node) => {
  if (!node) return;
  if (node.marktype && node.role === "mark" && Array.isArray(node.items)) {
    for (const item of node.items) {
      if (item.datum && !item.items) {
        items.push({ marktype: node.marktype, x: item.x, y: item.y, width: item.width, height: item.height, y2: item.y2 });
      }
    }
  }
  for (const child of node.items || []) walk(child);
};
walk(view.scenegraph().root);
const svg = await view.toSVG();
process.stdout.write(JSON.stringify({ items, svg }));
