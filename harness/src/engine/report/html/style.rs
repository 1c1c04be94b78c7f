//! The page's inline stylesheet and its one script (the filter box). Both are constants: no
//! report text ever reaches them, so nothing a target sends can run as code.

/// Colours keep dark text on light fills (contrast above 4.5:1); a status is always also
/// written as a word, never shown by colour alone.
pub(super) const CSS: &str = "\
:root{color-scheme:light}\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1240px;padding:0 1.2em 3em;color:#1f2328;background:#fff}\
h1{font-size:1.5em;margin:.8em 0 .3em}h2{font-size:1.25em;margin:1.6em 0 .4em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}\
h3{font-size:1.05em;margin:1em 0 .3em}h4{font-size:12px;margin:.2em 0;color:#57606a;text-transform:uppercase}\
a{color:#0550ae}code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\
pre{background:#f6f8fa;border:1px solid #d8dee4;padding:.5em;margin:0;overflow:auto;max-height:26em;white-space:pre-wrap;overflow-wrap:anywhere}\
.small{font-size:12px;color:#57606a}[hidden]{display:none!important}\
.verdict{font-size:1.35em;margin:.3em 0;padding:.45em .8em;border-radius:6px;border-left:10px solid}\
.verdict strong{font-size:1.3em;margin-right:.4em}\
.verdict.pass{background:#dafbe1;border-color:#1a7f37;color:#0d4a1f}.verdict.fail{background:#ffebe9;border-color:#cf222e;color:#82071e}\
.verdict.err{background:#fff1e5;border-color:#bc4c00;color:#6b2b00}\
.counts{list-style:none;padding:0;margin:.5em 0;display:flex;flex-wrap:wrap;gap:.4em}\
.counts li{padding:.2em .7em;border-radius:999px;border:1px solid #d0d7de}.counts li.plain{border:0;background:none}\
.counts strong{font-size:1.15em}#failure-count{font-size:1.1em}#failure-count a{color:inherit}\
.facts{display:flex;flex-wrap:wrap;gap:.1em 1.4em;margin:.4em 0;font-size:12px}.facts div{display:flex;gap:.4em}\
.facts dt{color:#57606a}.facts dd{margin:0}\
nav{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #d0d7de;padding:.45em 0}\
#filter{font:inherit;padding:.15em .4em;width:22em;max-width:60vw}\
.pass,td.p{background:#dafbe1}.fail{background:#ffebe9}.warn{background:#fff8c5}.na{background:#eef1f4}\
.untested{background:#f3e6fb}.err{background:#fff1e5}.xfail{background:#efe9fb}\
.counts li.pass{background:#dafbe1}\
.badge{display:inline-block;padding:0 .45em;border-radius:4px;font-size:12px;font-weight:600;border:1px solid #0002}\
.lvl{font-size:11px;font-weight:600;color:#57606a}\
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #d8dee4;padding:3px 7px;vertical-align:top;text-align:left}\
th{background:#f6f8fa}table.checks td:last-child{text-align:right;color:#57606a}\
table.checks td:first-child{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}table.checks p{margin:0;font:12px/1.4 system-ui,sans-serif;color:#57606a}\
section,article,details,h3{scroll-margin-top:3.5em}\
table.areas th[scope=row]{white-space:nowrap;background:#fff}td.cells{max-width:34em}\
.cell{display:inline-block;min-width:1.7em;text-align:center;margin:1px;padding:1px 3px;border-radius:3px;font-size:12px;text-decoration:none;color:#1f2328;border:1px solid #0003}\
.cell.pass{background:#8fd19e}.cell.fail{background:#f49b94}.cell.warn{background:#f7d56b}.cell.na{background:#cfd8dc}.cell.untested{background:#d7b3f5}\
svg text{font:11px system-ui,sans-serif;fill:#1f2328}svg.bar{vertical-align:middle;border:1px solid #d0d7de}\
.f-pass{fill:#2da44e}.f-fail{fill:#cf222e}.f-warn{fill:#d4a72c}.f-na{fill:#afb8c1}.f-err{fill:#e16f24}.f-xfail{fill:#8250df}.f-none{fill:#eaeef2}\
.f-lat{fill:#54aeff}.whisker{stroke:#0a3069;stroke-width:2}\
article.failure{border:1px solid #d0d7de;border-left:8px solid #cf222e;border-radius:6px;padding:.3em 1em .8em;margin:.8em 0;background:#fff}\
article.failure.warn{border-left-color:#d4a72c}article.failure.err{border-left-color:#e16f24}article.failure.xfail{border-left-color:#8250df}\
article.failure h3{margin:.4em 0}.msg{font-weight:600;white-space:pre-wrap}\
.muted{color:#666;font-weight:400}details.not-run{margin:.3em 0}\
.vs{display:grid;grid-template-columns:1fr 1fr;gap:.6em}.vs>div{min-width:0}\
@media (max-width:800px){.vs{grid-template-columns:1fr}}\
details{margin:.25em 0}summary{cursor:pointer}details.transcript ol{padding-left:1.4em}details.transcript li{margin:.5em 0}\
details.req{border-bottom:1px solid #eaeef2;padding:.15em 0}details.req .rule{display:block;margin:.1em 0 .2em 1.3em;color:#32383f}\
details.grp>summary h3{display:inline;margin:0}table.index td:first-child{white-space:nowrap}.ok{font-weight:600;color:#0d4a1f}\
";

/// The filter box: hides rows (`.fi`, and the check rows) whose text lacks a typed term, opens check groups
/// holding a match, and reports how many rows match. The page reads fully without it (the
/// box stays hidden when scripts do not run). A `#filter=` fragment pre-fills it.
pub(super) const SCRIPT: &str = r#"(function(){
var box=document.getElementById('filter-box'),input=document.getElementById('filter'),out=document.getElementById('filter-count');
if(!box||!input||!out){return;}
box.hidden=false;
var items=Array.prototype.slice.call(document.querySelectorAll('.fi,#checks tbody tr'));
// A row's cells joined by spaces (textContent alone glues "…@http" to "unsupported").
var texts=items.map(function(e){var t=e.cells?Array.prototype.map.call(e.cells,function(c){return c.textContent;}).join(' '):e.textContent;return t.toLowerCase();});
var groups=Array.prototype.slice.call(document.querySelectorAll('details.grp'));
var initial=groups.map(function(g){return g.open;});
// A verdict word matches whole words only: "unsupported" must not find unsupported_media_type.
var WORDS=['pass','fail','warn','unsupported','skipped','untested','xfail'];
function has(text,t){
if(WORDS.indexOf(t)<0){return text.indexOf(t)>=0;}
return new RegExp('(^|[^a-z0-9_])'+t+'($|[^a-z0-9_])').test(text);
}
function apply(){
var terms=input.value.toLowerCase().split(/\s+/).filter(function(t){return t.length>0;});
var shown=0;
items.forEach(function(e,i){
var hit=terms.every(function(t){return has(texts[i],t);});
e.hidden=!hit;if(hit){shown++;}
});
groups.forEach(function(g,i){
var any=g.querySelector('tbody tr:not([hidden])')!==null;
g.hidden=terms.length>0&&!any;
g.open=terms.length>0?any:initial[i];
});
out.textContent=terms.length>0?shown+' of '+items.length+' rows match':'';
}
input.addEventListener('input',apply);
if(location.hash.indexOf('#filter=')===0){input.value=decodeURIComponent(location.hash.slice(8));}
apply();
document.documentElement.setAttribute('data-filter-ready','1');
})();"#;
