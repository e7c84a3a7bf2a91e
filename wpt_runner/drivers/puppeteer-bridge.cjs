// Firefox for wpt_runner/engines.py: npm puppeteer-core over WebDriver BiDi.
//
// Reads one JSON command per line on stdin ({id, op, timeout, ...}) and answers
// each with {id, value} or {id, error, kind}; page errors are sent as
// {event: "pageerror", page, text}.  Ends (closing the browser) when stdin closes.
"use strict";
const path = require("path");
const readline = require("readline");

const puppeteer = require(path.join(process.env.WEBNN_NODE_DRIVERS || "", "node_modules", "puppeteer-core"));

let browser = null;
const pages = new Map();
let nextPage = 0;

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

function withTimeout(promise, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} timed out after ${ms} ms`), {kind: "timeout"})), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

function page(id) {
  const p = pages.get(id);
  if (!p) throw new Error(`no page ${id}`);
  return p;
}

const ops = {
  async launch(cmd) {
    browser = await puppeteer.launch({
      browser: "firefox", executablePath: cmd.executablePath, userDataDir: cmd.userDataDir,
      headless: true, protocolTimeout: 0,
    });
    return {version: await browser.version()};
  },
  async newPage() {
    const p = await browser.newPage();
    const id = ++nextPage;
    pages.set(id, p);
    p.on("pageerror", (e) => send({event: "pageerror", page: id, text: `uncaught: ${e && e.message || e}`}));
    p.on("console", (m) => m.type() === "error" && send({event: "pageerror", page: id, text: `console: ${m.text()}`}));
    return id;
  },
  async goto(cmd) {
    await page(cmd.page).goto(cmd.url, {waitUntil: "domcontentloaded", timeout: cmd.timeout});
    return null;
  },
  async evaluate(cmd) {
    try {
      const v = await page(cmd.page).evaluate(cmd.expression);
      return v === undefined ? null : v;
    } catch (e) {
      if (e && e.kind) throw e;
      throw Object.assign(new Error(e && e.message || String(e)), {kind: "evaluation"});
    }
  },
  async closePage(cmd) {
    const p = pages.get(cmd.page);
    pages.delete(cmd.page);
    if (p) await p.close();
    return null;
  },
  async close() {
    if (browser) await browser.close();
    browser = null;
    return null;
  },
};

const rl = readline.createInterface({input: process.stdin});
rl.on("line", async (line) => {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (e) {
    return;
  }
  try {
    const op = ops[cmd.op];
    if (!op) throw new Error(`unknown op ${cmd.op}`);
    const value = await withTimeout(op(cmd), cmd.timeout || 60000, cmd.op);
    send({id: cmd.id, value});
  } catch (e) {
    send({id: cmd.id, error: e && e.message || String(e), kind: e && e.kind || "driver"});
  }
});
rl.on("close", async () => {
  try {
    if (browser) await browser.close();
  } finally {
    process.exit(0);
  }
});
