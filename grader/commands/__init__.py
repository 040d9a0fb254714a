"""The commands of ``micrograde``, one module each: ``run(args)`` does the work and returns the exit
status. ``grader.cli`` parses the command line and dispatches here; the error family
(``grader.errors``) carries every other exit status up to it."""
