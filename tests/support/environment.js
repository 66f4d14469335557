/**
 * The integration tests' Jest environment: Node's, with the test process's HTTP client (the global
 * `fetch`) letting go of an idle connection after a second.
 *
 * Why: the API under test closes a connection idle for 5 s (Node's keepAliveTimeout). The client's
 * own limit defaults to that hint less a second, checked by a timer of one-second resolution; a
 * request sent on a connection idle for about 5 s can meet the server's close on the way
 * (ECONNRESET, "fetch failed"), the keep-alive race every HTTP client has. At 1 s the client always
 * drops the connection first. It has to be set here: Node's fetch reads its dispatcher from the
 * process's own global object, which a test file (run in a sandbox of its own) cannot reach.
 */
const { TestEnvironment } = require('jest-environment-node');
const { Agent, setGlobalDispatcher } = require('undici');

setGlobalDispatcher(new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 }));

module.exports = TestEnvironment;
