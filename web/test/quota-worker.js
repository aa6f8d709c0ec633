// A download worker (web/store-worker.js) in a storage whose quota is
// ?quota= bytes: the sync access handle's truncate and write throw the
// QuotaExceededError a full origin's would. For web/test/download.test.mjs.
"use strict";
const limit = Number(new URL(self.location.href).searchParams.get("quota"));
const proto = FileSystemSyncAccessHandle.prototype;
const truncate = proto.truncate, write = proto.write;
const full = () => new DOMException("the origin's storage quota is exceeded", "QuotaExceededError");
proto.truncate = function (n) {
  if (n > limit) throw full();
  return truncate.call(this, n);
};
proto.write = function (buf, opts) {
  if ((opts && opts.at || 0) + buf.byteLength > limit) throw full();
  return write.call(this, buf, opts);
};
importScripts("../store-worker.js");
