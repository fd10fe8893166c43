/**
 * `npm install` (postinstall) and by hand: makes the migrated data directory a first start on a new embedded
 * directory copies instead of running initdb and every migration (src/db/embedded-image.ts says where it goes).
 * Never fails an install: whatever goes wrong is said in one line, and a first start then runs initdb as before.
 */
import { embeddedImagePath, writeEmbeddedImage } from "../src/db/embedded-image.ts";
import { migratedEmbeddedImage } from "../src/db/migrate.ts";

const started = performance.now();
const path = embeddedImagePath();
try {
  if (!path) {
    console.log("embedded database image: off (VEND_EMBEDDED_IMAGE=off)");
  } else {
    const image = await migratedEmbeddedImage();
    await writeEmbeddedImage(path, image);
    const megabytes = Math.round(image.size / 1e6);
    console.log(`embedded database image for first starts: ${path} (${megabytes} MB, ${seconds()} s)`);
  }
} catch (error) {
  console.log(
    `embedded database image not made (${(error as Error).message}): a first start will create the database files itself`,
  );
}

function seconds() {
  return ((performance.now() - started) / 1000).toFixed(1);
}
