/** Stylesheets imported by app.ts are bundled by esbuild into app.css; they export nothing. */
declare module '*.css';
