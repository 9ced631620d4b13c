"""The machinery of machine work, a layer below the services: claiming items under leases
(locks), calling endpoints (caller, under the shared limits), executing chunks and writing each
answer as it arrives (engine). It imports models and the pure suite protocol, never services,
selectors, tasks or views; what an item is and how it is answered comes in as a Handler."""
