// The hall screen reads the standings again by itself, every data-refresh seconds; no other page has a script.
"use strict";
setTimeout(function () { location.reload(); }, (Number(document.body.dataset.refresh) || 30) * 1000);
