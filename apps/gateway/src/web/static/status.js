// Live status page: filled in with the status page.
