// The uno-lab table: plain JavaScript modules talking to the JSON API (docs/web.md), one
// per tab (setup.js and table.js: Play, with friends.js for a table of several people;
// replay.js; lab.js) over common.js and cards.js. This one starts the page.

import { safely } from "./common.js";
import { resumeTable } from "./friends.js";
import "./lab.js";
import "./replay.js";
import { setup, watchWarmup } from "./setup.js";
import { game, resume } from "./table.js";

window.addEventListener("hashchange", safely(async () => {
  if (game && (location.hash === `#game=${game.id}` || location.hash === `#table=${game.id}`)) return;
  if (/^#game=/.test(location.hash)) await resume();
  if (/^#table=/.test(location.hash)) await resumeTable();
}));
safely(watchWarmup)();
safely(async () => {
  await setup();
  if (!(await resume())) await resumeTable();
})();
