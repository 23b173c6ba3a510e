// Package tests holds, one directory per package, the tests of the sched
// modules (sched, sched/httptool, sched/satmath, sched/quota) that need
// third-party libraries: goleak on the Runner's and httptool's goroutines,
// httpmock transports, the x/sync and x/time reference benchmark, rapid
// property tests, and a real redis-server for the shared quota. The sched
// modules' go.mod files list only what their importers need (sched: nothing;
// quota: go-redis), and a test dependency of a module shows up in every
// importer's module graph, so these tests live in the root module, which
// requires those libraries anyway. They use only the packages' exported API;
// tests that need unexported state stay next to the code and use the
// standard library.
package tests
